/* The LSTM's exact replay (workbench.kernels.scan.LSTMScan): a step's elementwise work, forward and backward; torch
   keeps the matrix products. */
#include "cell.h"

/* Step t forward. acts[t] (B, 4H) holds the gates' pre-activations on entry and their activations on exit;
   cprev[t] (B, H) is the cell state entering step t, already zeroed where an episode begins. Writes tanh(c) to
   tcs[t] and h to out[t]; the next step's inputs hprev[t + 1] = h * keep[t + 1] and cprev[t + 1] = c * keep[t + 1],
   or at the last step c to cfin. */
void lstm_forward_step(float *acts, const float *cprev_all, float *hprev_all, float *cprev_next_all, float *tcs,
                       float *out, const float *keep, float *cfin, long T, long B, long H, long t) {
    float *a = acts + t * B * 4 * H, *tc = tcs + t * B * H, *h = out + t * B * H;
    const float *cp = cprev_all + t * B * H;
    int last = t == T - 1;
    for (long b = 0; b < B; b++) {
        float *cn = last ? cfin + b * H : cprev_next_all + (t + 1) * B * H + b * H;
        cell_forward(a + b * 4 * H, cp + b * H, cn, tc + b * H, h + b * H, H);
        if (last) continue;
        float k = keep[(t + 1) * B + b], *hn = hprev_all + (t + 1) * B * H + b * H;
        for (long j = 0; j < H; j++) { cn[j] *= k; hn[j] = h[b * H + j] * k; }
    }
}

/* Step t backward. dh (B, H): on entry the gradient reaching h_t from step t + 1 before its reset (dG[t + 1] W_hh),
   or that of the final h at t = T - 1; dc (B, H) likewise for c (dc_{t+1} f_{t+1}, or the final c's). dout[t]: the
   gradient of out[t] (NULL: none). Writes the gates' pre-activation gradients to dG[t] and leaves in dc the
   gradient reaching the state entering step t (dc_t f_t, before step t's own reset); dh is left scratch. */
void lstm_backward_step(const float *acts, const float *cprev_all, const float *tcs, const float *dout,
                        const float *keep, float *dh, float *dc, float *dG, long T, long B, long H, long t) {
    const float *a = acts + t * B * 4 * H, *tc = tcs + t * B * H, *cp = cprev_all + t * B * H;
    const float *dy = dout ? dout + t * B * H : 0;
    int last = t == T - 1;
    for (long b = 0; b < B; b++) {
        float k = last ? 1.0f : keep[(t + 1) * B + b], *gh = dh + b * H, *dcb = dc + b * H;
        for (long j = 0; j < H; j++) { gh[j] = gh[j] * k + (dy ? dy[b * H + j] : 0.0f); dcb[j] *= k; }
        cell_backward(a + b * 4 * H, cp + b * H, tc + b * H, gh, dcb, dG + t * B * 4 * H + b * 4 * H, H);
    }
}
