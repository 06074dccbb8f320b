/* One LSTM cell's arithmetic (float32, gates i, f, g, o), for the PPO kernels of the LSTM policy
   (ppo_lstm.c). */
#pragma once
#include "common.h"

static inline float sig(float x) { return 1.0f / (1.0f + expf(-x)); }

/* a (4H): the gates' pre-activations on entry, their activations on exit; cp (H): the cell state entering the step
   (after its reset). Writes the cell state c, tanh(c) to tc and the output h. */
static inline void cell_forward(float *restrict a, const float *restrict cp, float *restrict c, float *restrict tc,
                                float *restrict h, long H) {
    float *ai = a, *af = ai + H, *ag = af + H, *ao = ag + H;
    _Pragma("omp simd")
    for (long j = 0; j < H; j++) {
        float i = sig(ai[j]), f = sig(af[j]), g = tanhf(ag[j]), o = sig(ao[j]);
        float cj = f * cp[j] + i * g, s = tanhf(cj);
        ai[j] = i; af[j] = f; ag[j] = g; ao[j] = o;
        c[j] = cj; tc[j] = s; h[j] = o * s;
    }
}

/* Back through the cell of a step: a, cp, tc as cell_forward left them; gh (H) the gradient reaching h (from the
   step after and the output's own), dc (H) on entry the gradient reaching c from the step after, on exit the one
   reaching the cell state entering this step (before its reset). Writes the pre-activations' gradients to d (4H). */
static inline void cell_backward(const float *restrict a, const float *restrict cp, const float *restrict tc,
                                 const float *restrict gh, float *restrict dc, float *restrict d, long H) {
    const float *ai = a, *af = ai + H, *ag = af + H, *ao = ag + H;
    float *di = d, *df = di + H, *dg = df + H, *dO = dg + H;
    _Pragma("omp simd")
    for (long j = 0; j < H; j++) {
        float i = ai[j], f = af[j], g = ag[j], o = ao[j], s = tc[j];
        float gc = dc[j] + gh[j] * o * (1.0f - s * s);
        di[j] = gc * g * i * (1.0f - i); df[j] = gc * cp[j] * f * (1.0f - f);
        dg[j] = gc * i * (1.0f - g * g); dO[j] = gh[j] * s * o * (1.0f - o);
        dc[j] = gc * f;
    }
}
