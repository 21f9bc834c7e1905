// SPDX-License-Identifier: MIT
// Boost.Context baseline: the raw fcontext switch (make_fcontext/jump_fcontext), which is what
// Boost's fibers and coroutines sit on. A peer context bounces every jump straight back.
#include <boost/context/detail/fcontext.hpp>

#include <cstdlib>

#include "bench.h"

namespace fctx = boost::context::detail;

static const std::size_t peer_stack_size = 64 * 1024;
static fctx::fcontext_t peer;

static void peer_main(fctx::transfer_t t)
{
	for (;;)
		t = fctx::jump_fcontext(t.fctx, nullptr);
}

extern "C" uint64_t bench_fcontext_roundtrips(void *arg, long iters)
{
	uint64_t t0;
	long i;

	(void)arg;
	if (!peer) {
		// The peer never ends; its stack lives as long as the process.
		char *stack = static_cast<char *>(std::malloc(peer_stack_size));

		if (!stack)
			std::abort();
		peer = fctx::make_fcontext(stack + peer_stack_size, peer_stack_size, peer_main);
		peer = fctx::jump_fcontext(peer, nullptr).fctx; // first entry, outside the timing
	}
	t0 = bench_now_ns();
	for (i = 0; i < iters; i++)
		peer = fctx::jump_fcontext(peer, nullptr).fctx;
	return bench_now_ns() - t0;
}
