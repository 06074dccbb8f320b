/* What every kernel includes first. */
#pragma once
#include <math.h>
#include <string.h>
