/* SPDX-License-Identifier: MIT */
/*
 * The closed-form helpers of the mpi_like_prog workload, shared by its mpi_like version
 * (examples/mpi_like/mpi_like_prog.c) and its MPI version (examples/mpi/mpi_prog.c): both must
 * compute the same bits, so both use this one copy. No libm.
 */
#ifndef ML_MATH_H
#define ML_MATH_H

#define PI 3.14159265358979323846

/* sin(x) from + - * / only: the same bits wherever it is compiled (no FMA in baseline x86-64) */
static double sine(double x)
{
#define INV(n) (1.0 / ((2.0 * n) * (2.0 * n + 1)))
	static const double inv[11] = {
	    0, INV(1), INV(2), INV(3), INV(4), INV(5), INV(6), INV(7), INV(8), INV(9), INV(10),
	};
	const double two_pi_hi = 6.28318530717958623200e+00, two_pi_lo = 2.44929359829470635445e-16;
	double k = (double)(long)(x / (2 * PI) + (x >= 0 ? 0.5 : -0.5));
	double r = (x - k * two_pi_hi) - k * two_pi_lo, r2, s = 1.0;
	int n;

	if (r > PI / 2)
		r = PI - r;
	else if (r < -PI / 2)
		r = -PI - r;
	r2 = r * r;
	for (n = 10; n >= 1; n--) /* Taylor to r^21: 1e-18 for |r| <= pi/2 */
		s = 1.0 - r2 * inv[n] * s;
	return r * s;
}

static double power(double x, long n)
{
	double p = 1.0;

	for (; n > 0; n >>= 1, x *= x)
		if (n & 1)
			p *= x;
	return p;
}

static double root2(double a)
{
	double x = a > 1 ? a : 1;
	int i;

	for (i = 0; i < 64; i++)
		x = (x + a / x) / 2;
	return x;
}

#endif
