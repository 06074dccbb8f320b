/* What every kernel includes first. */
#pragma once
#include <math.h>
#include <string.h>

/* glibc's math.h declares its vector expf, logf and tanhf (libmvec) only under gcc's fast-math (__FAST_MATH__), which
   the build leaves out so that NaN and infinity keep their meaning (with it gcc folds isnan(x) to 0). Declared here,
   loops over them with OpenMP's simd still call the vector forms. */
#if defined(__x86_64__) && defined(__GLIBC__) && !defined(__FAST_MATH__)
float expf(float) __attribute__((__simd__("notinbranch")));
float logf(float) __attribute__((__simd__("notinbranch")));
float tanhf(float) __attribute__((__simd__("notinbranch")));
#endif
