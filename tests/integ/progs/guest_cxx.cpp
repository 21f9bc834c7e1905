// SPDX-License-Identifier: MIT
// C++ in a ULP: static constructors and destructors, iostream, exceptions.
#include <cstdlib>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

static int rank_of_env()
{
	const char *r = std::getenv("ULP_RANK");
	return r ? std::atoi(r) : -1;
}

struct Global {
	int rank;
	std::string tag;
	Global() : rank(rank_of_env()), tag("constructed") {}
	~Global() { std::cout << "rank " << rank << " destructor" << std::endl; }
};
static Global g;

int main()
{
	std::vector<int> v;
	int caught = 0;

	for (int i = 0; i < 10000; i++)
		v.push_back(i * g.rank);
	try {
		throw std::runtime_error("boom " + std::to_string(g.rank));
	} catch (const std::exception &e) {
		caught = std::string(e.what()) == "boom " + std::to_string(g.rank);
	}
	std::cout << "rank " << g.rank << " " << g.tag << " caught=" << caught
		  << " sum=" << v.back() << std::endl;
	return caught ? 0 : 1;
}
