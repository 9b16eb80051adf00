/** The video screenshot's seek (renderer.ts, the `video` render option): what runs in the page. */

export type Clip = { x: number; y: number; width: number; height: number };
export interface SeekOutcome {
  state: 'ok' | 'no-video' | 'no-frame' | 'past-end';
  duration?: number;
  clip?: Clip;
}

/**
 * Run in the page (a string: the page's realm, not ours): waits for its first <video>, starts it muted if it
 * has loaded nothing, pauses it at `second`, waits until that frame is decoded, and answers the element's box
 * within the viewport. test/node/render.test.ts runs it in chromium against a loopback page (this module
 * imports nothing, so the node project can load it).
 */
export function seekScript(second: number, waitMs: number): string {
  return `(async (second, waitMs) => {
    const deadline = Date.now() + waitMs;
    const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
    let video = null;
    while (!(video = document.querySelector('video'))) { if (Date.now() > deadline) return { state: 'no-video' }; await sleep(100); }
    video.muted = true;
    if (video.readyState < 1) { try { await Promise.race([video.play(), sleep(1000)]); } catch {} }
    while (video.readyState < 1) { if (Date.now() > deadline) return { state: 'no-frame' }; await sleep(100); }
    video.pause();
    if (Number.isFinite(video.duration) && second > video.duration) return { state: 'past-end', duration: video.duration };
    if (Math.abs(video.currentTime - second) > 0.04) {
      const seeked = new Promise((resolve) => video.addEventListener('seeked', resolve, { once: true }));
      video.currentTime = second;
      await Promise.race([seeked, sleep(Math.max(0, deadline - Date.now()))]);
    }
    while (video.seeking || video.readyState < 2) { if (Date.now() > deadline) return { state: 'no-frame' }; await sleep(100); }
    const box = video.getBoundingClientRect();
    const x = Math.max(0, box.left), y = Math.max(0, box.top);
    const width = Math.min(box.right, innerWidth) - x, height = Math.min(box.bottom, innerHeight) - y;
    return { state: 'ok', duration: video.duration, clip: width > 0 && height > 0 ? { x, y, width, height } : undefined };
  })(${JSON.stringify(second)}, ${JSON.stringify(waitMs)})`;
}
