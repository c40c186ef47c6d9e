#pragma once
#include <memory>
#include <string>
#include <vector>

struct Shape {
	virtual ~Shape();
	virtual double area() const = 0;
	virtual std::string name() const;
};
std::unique_ptr<Shape> make_shape(const std::string &kind, double size);
double total_area(const std::vector<std::unique_ptr<Shape>> &v);

template <typename T> T clamp_to(T v, T lo, T hi) { return v < lo ? lo : v > hi ? hi : v; }

struct Animal {
	virtual ~Animal() = default;
	virtual std::string speak() const = 0;
};
std::vector<std::unique_ptr<Animal>> make_zoo();
int zoo_checked(int x); // throws for negative x
