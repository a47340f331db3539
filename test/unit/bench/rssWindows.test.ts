// How make bench-long judges flat memory (bench/rssWindows.ts): the windows it compares and the
// drift it reports.
import { expect } from "chai";
import { driftFrom, largestPeakDrift, peaksPerWindow } from "../../../bench/rssWindows.js";

const minute = 60_000;

describe("bench/rssWindows", () => {
  it("takes the highest reading of each window after the warm-up, in order", () => {
    const readings = [
      { atMs: 10_000, rssMiB: 400 },
      { atMs: 59_999, rssMiB: 390 },
      { atMs: 60_000, rssMiB: 200 },
      { atMs: 90_000, rssMiB: 230 },
      { atMs: 119_999, rssMiB: 210 },
      { atMs: 150_000, rssMiB: 220 },
      { atMs: 170_000, rssMiB: 215 },
    ];
    expect(peaksPerWindow(readings, minute)).to.deep.equal([
      { fromMs: 60_000, peakMiB: 230 },
      { fromMs: 120_000, peakMiB: 220 },
    ]);
  });

  it("leaves out a last window shorter than half a window, and keeps one of half or more", () => {
    const readings = [
      { atMs: 70_000, rssMiB: 200 },
      { atMs: 130_000, rssMiB: 210 },
      { atMs: 140_000, rssMiB: 500 },
    ];
    expect(peaksPerWindow(readings, minute).map(({ fromMs }) => fromMs)).to.deep.equal([60_000]);
    expect(peaksPerWindow([...readings, { atMs: 150_000, rssMiB: 205 }], minute)).to.deep.equal([
      { fromMs: 60_000, peakMiB: 200 },
      { fromMs: 120_000, peakMiB: 500 },
    ]);
  });

  it("skips windows without a reading", () => {
    const readings = [
      { atMs: 65_000, rssMiB: 200 },
      { atMs: 275_000, rssMiB: 204 },
    ];
    expect(peaksPerWindow(readings, minute)).to.deep.equal([
      { fromMs: 60_000, peakMiB: 200 },
      { fromMs: 240_000, peakMiB: 204 },
    ]);
  });

  it("measures drift up and down from the first window's peak, the largest of them", () => {
    expect(driftFrom(200, 220)).to.be.closeTo(0.1, 1e-12);
    expect(driftFrom(200, 170)).to.be.closeTo(0.15, 1e-12);
    const windows = [
      { fromMs: 60_000, peakMiB: 200 },
      { fromMs: 120_000, peakMiB: 216 },
      { fromMs: 180_000, peakMiB: 176 },
      { fromMs: 240_000, peakMiB: 204 },
    ];
    const compared = largestPeakDrift(windows)!;
    expect(compared.reference).to.equal(windows[0]);
    expect(compared.drift).to.be.closeTo(0.12, 1e-12);
  });

  it("has nothing to compare with fewer than two windows", () => {
    expect(largestPeakDrift([])).to.equal(undefined);
    expect(largestPeakDrift([{ fromMs: 60_000, peakMiB: 200 }])).to.equal(undefined);
  });
});
