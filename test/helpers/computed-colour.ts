import type { Locator } from 'playwright-core';

/** The part of the page's window this reads. */
interface PageWindow {
  getComputedStyle(element: unknown): { getPropertyValue(name: string): string };
}

/** A colour as red, green, blue (0–255). */
export type Rgb = [number, number, number];

/**
 * The colour the browser computed for an element's CSS property (`color`, `background-color`,
 * `outline-color`…), as the eye gets it: what the page shows, whichever rule won.
 */
export async function computedColour(locator: Locator, property: string): Promise<Rgb> {
  const text = await locator.evaluate(
    (element, name) =>
      // Runs in the page; the test programs have no DOM types.
      (globalThis as unknown as PageWindow).getComputedStyle(element).getPropertyValue(name),
    property,
  );
  const [r = 0, g = 0, b = 0] = (text.match(/\d+(\.\d+)?/g) ?? []).map(Number);
  return [r, g, b];
}

/** Green to the eye: green clearly above red and blue (Good, Running, On). */
export const greenish = ([r, g, b]: Rgb): boolean => g > r + 40 && g > b + 20;

/** Red to the eye: red clearly above green and blue (Bad, Error, Stopped). */
export const reddish = ([r, g, b]: Rgb): boolean => r > g + 60 && r > b + 40;

/** Grey to the eye: no hue to speak of (reserved for what is off or out of service). */
export const greyish = ([r, g, b]: Rgb): boolean => Math.max(r, g, b) - Math.min(r, g, b) < 30;
