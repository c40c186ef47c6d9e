#include "shapes.h"
#include <cstdio>
#include <map>
#include <stdexcept>

static std::map<std::string, int> registry = {{"a", 1}, {"b", 2}}; // static init

int main()
{
	std::vector<std::unique_ptr<Shape>> v;
	v.push_back(make_shape("square", 2));
	v.push_back(make_shape("circle", 1));
	for (auto &s : v)
		std::printf("%s %.1f\n", s->name().c_str(), s->area());
	std::printf("total %.1f clamp %d\n", total_area(v), clamp_to(15, 0, 10));
	try {
		make_shape("hexagon", 1);
	} catch (const std::invalid_argument &e) {
		std::printf("caught %s\n", e.what());
	}
	for (auto &a : make_zoo())
		std::printf("%s\n", a->speak().c_str());
	try {
		std::printf("zoo %d\n", zoo_checked(3));
		zoo_checked(-1);
	} catch (const std::exception &e) {
		std::printf("caught %s\n", e.what());
	}
	std::printf("registry %zu %d\n", registry.size(), registry["b"]);
	return 0;
}
