#include "shapes.h"
#include <stdexcept>

namespace {
struct Dog : Animal {
	std::string speak() const override { return "woof"; }
};
struct Cat : Animal {
	int lives = 9;
	std::string speak() const override { return "meow x" + std::to_string(lives); }
};
thread_local int zoo_calls;
} // namespace

std::vector<std::unique_ptr<Animal>> make_zoo()
{
	std::vector<std::unique_ptr<Animal>> z;
	z.push_back(std::make_unique<Dog>());
	z.push_back(std::make_unique<Cat>());
	return z;
}

int zoo_checked(int x)
{
	++zoo_calls;
	if (x < 0)
		throw std::out_of_range("negative " + std::to_string(x));
	return x * zoo_calls;
}
