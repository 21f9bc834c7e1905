// SPDX-License-Identifier: MIT
// C++ threads in one program, checked by the program itself (tests/integ/threads.sh runs it as a
// process and as ULPs): std::thread, std::async/future, mutex, condition_variable with wait_for,
// thread_local with a constructor and destructor, exceptions across a future.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <future>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <thread>
#include <vector>

static int failures;

static void check(const char *name, bool ok, const char *why)
{
	if (ok) {
		std::printf("ok %s\n", name);
	} else {
		std::printf("FAIL %s: %s\n", name, why);
		failures++;
	}
	std::fflush(stdout);
}

static std::atomic<int> tl_destroyed{0};
struct Counted {
	int v = 7;
	~Counted() { tl_destroyed++; }
};
static thread_local Counted tl_obj;

int main()
{
	std::mutex m;
	long sum = 0;
	std::vector<std::thread> ts;
	for (int i = 0; i < 8; i++)
		ts.emplace_back([&, i] {
			for (int k = 0; k < 10000; k++) {
				std::lock_guard<std::mutex> g(m);
				sum += i;
			}
			tl_obj.v += i;
		});
	for (auto &t : ts)
		t.join();
	check("std-thread-mutex", sum == 10000L * 28, "wrong sum");
	check("thread-local-dtor", tl_destroyed == 8 && tl_obj.v == 7,
	      "thread_local destructors did not run once per thread");

	std::vector<std::future<long>> fs;
	for (long i = 1; i <= 16; i++)
		fs.push_back(std::async(std::launch::async, [i] {
			long s = 0;
			for (long k = 1; k <= i * 1000; k++)
				s += k;
			return s;
		}));
	long total = 0, want = 0;
	for (long i = 1; i <= 16; i++)
		want += (i * 1000) * (i * 1000 + 1) / 2;
	for (auto &f : fs)
		total += f.get();
	check("std-async", total == want, "wrong total");

	auto bad = std::async(std::launch::async, []() -> int { throw std::runtime_error("x"); });
	bool caught = false;
	try {
		bad.get();
	} catch (const std::runtime_error &) {
		caught = true;
	}
	check("future-exception", caught, "exception not carried by the future");

	std::condition_variable cv;
	std::unique_lock<std::mutex> lk(m);
	auto t0 = std::chrono::steady_clock::now();
	bool woke = cv.wait_for(lk, std::chrono::milliseconds(50), [] { return false; });
	auto el = std::chrono::steady_clock::now() - t0;
	check("cv-wait-for-timeout", !woke && el >= std::chrono::milliseconds(49),
	      "wait_for returned early or true");
	bool flag = false;
	std::thread setter([&] {
		std::this_thread::sleep_for(std::chrono::milliseconds(10));
		std::lock_guard<std::mutex> g(m);
		flag = true;
		cv.notify_one();
	});
	woke = cv.wait_for(lk, std::chrono::seconds(10), [&] { return flag; });
	lk.unlock();
	setter.join();
	check("cv-notify", woke && flag, "not woken by notify_one");
	std::printf("%s\n", failures ? "FAILED" : "all ok");
	return failures != 0;
}
