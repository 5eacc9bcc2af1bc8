#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Where the echo left in double talk lies, and how much a suppressor could take of it.

Reads a corpus scenario (quell-corpus: near.wav, noise.wav, echo.wav, scenario.json) and the linear
canceller's output for it (quell-render --suppression 0, so the output is aligned with the microphone and
out - near - noise is exactly the echo the filter left), and prints:
  - per band above 300 Hz, over the double-talk intervals: the near end's, the echo's and the residual's
    power, the filter's reach (echo over residual) there and in far-end single talk, and each band's
    share of the residual;
  - the near-end SNR after the 64-tap linear fit (quell-eval's nsnr_fit, recomputed here with a 4th-order
    Butterworth high-pass at 300 Hz; on three double-talk files of the corpus, CPU Kalman filter, 22.7 /
    21.9 / 20.5 dB where quell-eval gives 22.6 / 21.4 / 20.2) of the output as it is, after a
    per-bin Wiener gain that knows the true near end and residual (the best any suppressor could do, frame
    by frame), and after one that knows only each bin's residual-to-echo ratio measured in single talk
    and the true echo (a suppressor whose linear model were exact).
Needs python3-numpy and python3-scipy (Debian), which the build does not.

  build/bin/quell-render --mic C/S/mic.wav --ref C/S/ref.wav --out out.wav --suppression 0 --quiet
  python3 Tests/eval/double_talk_residual.py C/S out.wav
"""
import json
import sys

import numpy as np
from scipy import signal
from scipy.io import wavfile

RATE = 16000
FRAME, HOP = 256, 128


def read(path):
    _, x = wavfile.read(path)
    # Integer PCM to full scale by its type, not by its level (a quiet 16-bit file stays in range too).
    scale = float(np.iinfo(x.dtype).max) + 1.0 if np.issubdtype(x.dtype, np.integer) else 1.0
    x = x.astype(np.float64) / scale
    if x.ndim > 1:
        x = x[:, 0]
    return x


def high_pass(x):
    b, a = signal.butter(4, 300, 'high', fs=RATE)
    return signal.lfilter(b, a, x)


def samples_in(intervals, n):
    idx = np.concatenate([np.arange(int(a * RATE), int(b * RATE)) for a, b in intervals])
    return idx[idx < n]


def snr_after_fit(reference, out, intervals, taps=64):
    reference, out = high_pass(reference), high_pass(out)
    half = taps // 2
    idx = samples_in(intervals, len(out))
    idx = idx[(idx >= half) & (idx + half < len(out))]
    x = np.stack([reference[idx + half - k] for k in range(taps)], 1)
    y = out[idx]
    fit = x @ np.linalg.lstsq(x, y, rcond=None)[0]
    return 10 * np.log10((fit @ fit) / ((y - fit) @ (y - fit)))


def stft(x):
    return signal.stft(x, fs=RATE, nperseg=FRAME, noverlap=FRAME - HOP, window='hann')


def istft(spectrum, n):
    return signal.istft(spectrum, fs=RATE, nperseg=FRAME, noverlap=FRAME - HOP, window='hann')[1][:n]


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    folder, output = sys.argv[1], sys.argv[2]
    scenario = json.load(open(folder + '/scenario.json'))
    if not scenario['doubleTalkIntervals']:
        sys.exit('no double talk in ' + folder)
    near = read(folder + '/near.wav') + read(folder + '/noise.wav')
    echo = read(folder + '/echo.wav')
    out = read(output)
    n = min(len(near), len(out))
    near, echo, out = near[:n], echo[:n], out[:n]
    residual = out - near

    double_talk = samples_in(scenario['doubleTalkIntervals'], n)
    first_near = min(a for a, _ in scenario['nearActive'])
    single_talk = np.arange(RATE, int(first_near * RATE))   # far end alone, after the first second
    f, p_near = signal.welch(near[double_talk], RATE, nperseg=512)
    _, p_echo = signal.welch(echo[double_talk], RATE, nperseg=512)
    _, p_res = signal.welch(residual[double_talk], RATE, nperseg=512)
    _, p_echo1 = signal.welch(echo[single_talk], RATE, nperseg=512)
    _, p_res1 = signal.welch(residual[single_talk], RATE, nperseg=512)
    total = p_res[f >= 300].sum()
    db = lambda v: 10 * np.log10(v)
    print('band Hz      near  echo  residual (dB, double talk) | reach double talk / single talk | share')
    edges = [300, 500, 1000, 2000, 3000, 4000, 6000, 8001]
    for lo, hi in zip(edges[:-1], edges[1:]):
        m = (f >= lo) & (f < hi)
        print('%4d-%-4d  %6.1f %6.1f %6.1f | %5.1f / %5.1f | %4.1f %%' % (
            lo, min(hi, 8000), db(p_near[m].sum()), db(p_echo[m].sum()), db(p_res[m].sum()),
            db(p_echo[m].sum() / p_res[m].sum()), db(p_echo1[m].sum() / p_res1[m].sum()), 100 * p_res[m].sum() / total))

    where = scenario['nearActive']
    print('near-end SNR after the fit: output %.1f dB' % snr_after_fit(near, out, where))
    _, t, s_near = stft(near)
    _, _, s_res = stft(residual)
    _, _, s_out = stft(out)
    _, _, s_echo = stft(echo)
    pn, pr, po, pe = (np.abs(s) ** 2 for s in (s_near, s_res, s_out, s_echo))
    oracle = pn / (pn + pr + 1e-30)
    print('  per-bin Wiener gain, true near end and residual: %.1f dB' % snr_after_fit(near, istft(s_out * oracle, n), where))
    alone = (t > 1.0) & (t < first_near)
    leak = pr[:, alone].sum(1) / (pe[:, alone].sum(1) + 1e-30)
    estimate = leak[:, None] * pe
    gain = np.clip(1.0 - estimate / (po + 1e-30), 0.0, 1.0)
    print('  per-bin Wiener gain, residual = single talk\'s ratio x true echo: %.1f dB' % snr_after_fit(near, istft(s_out * gain, n), where))


if __name__ == '__main__':
    main()
