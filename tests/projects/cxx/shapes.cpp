#include "shapes.h"
#include <stdexcept>

Shape::~Shape() = default;
std::string Shape::name() const { return "shape"; }

namespace {
struct Square : Shape {
	double s;
	explicit Square(double s) : s(s) {}
	double area() const override { return s * s; }
	std::string name() const override { return "square"; }
};
struct Circle : Shape {
	double r;
	explicit Circle(double r) : r(r) {}
	double area() const override { return 3.0 * r * r; }
};
} // namespace

std::unique_ptr<Shape> make_shape(const std::string &kind, double size)
{
	if (kind == "square")
		return std::make_unique<Square>(size);
	if (kind == "circle")
		return std::make_unique<Circle>(size);
	throw std::invalid_argument("unknown shape " + kind);
}

double total_area(const std::vector<std::unique_ptr<Shape>> &v)
{
	double t = 0;
	for (auto &s : v)
		t += clamp_to(s->area(), 0.0, 1000.0);
	return t;
}
