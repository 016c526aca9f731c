/**
 * Colour contrast after WCAG 2.2 (success criterion 1.4.3, "Contrast (Minimum)"): the ratio of
 * relative luminances, (L1 + 0.05) / (L2 + 0.05), from 1 (same colour) to 21 (black on white).
 * Level AA asks 4.5:1 for body text.
 */

/** WCAG AA's minimum contrast ratio for normal-size text. */
export const WCAG_AA_TEXT_RATIO = 4.5;

/** The page background a portal's accent colour is shown on (links, outlines): white. */
export const PORTAL_SURFACE_COLOUR = '#ffffff';

const HEX = /^#([0-9a-f]{3}|[0-9a-f]{6})$/i;

/** Whether `value` is a `#rgb` or `#rrggbb` colour. */
export function isHexColour(value: string): boolean {
  return HEX.test(value);
}

/** `#rgb` or `#rrggbb` as `#rrggbb` in lower case. @throws RangeError for anything else */
export function normaliseHexColour(value: string): string {
  const m = HEX.exec(value);
  if (!m) throw new RangeError(`not a #rgb or #rrggbb colour: ${value}`);
  const hex = m[1]!.toLowerCase();
  return `#${hex.length === 3 ? [...hex].map((c) => c + c).join('') : hex}`;
}

/** WCAG relative luminance of a `#rgb`/`#rrggbb` colour, 0 (black) to 1 (white). */
export function relativeLuminance(colour: string): number {
  const hex = normaliseHexColour(colour).slice(1);
  const [r, g, b] = [0, 2, 4].map((i) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** Contrast ratio of two colours, 1..21, the same whichever is given first. */
export function contrastRatio(a: string, b: string): number {
  const [hi, lo] = [relativeLuminance(a), relativeLuminance(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
}

/** What {@link checkAccentColour} answers. */
export type AccentCheck =
  | {
      ok: true;
      /** The accent as `#rrggbb`. */
      accent: string;
      /** Text colour on accent backgrounds (buttons, the top bar): white or near-black, whichever contrasts more. */
      onAccent: string;
      /** Contrast of the accent on the white page (links), ≥ 4.5. */
      ratioOnSurface: number;
      /** Contrast of `onAccent` on the accent, ≥ 4.5. */
      ratioOnAccent: number;
    }
  | { ok: false; reason: string };

/**
 * Checks an org's portal accent colour for WCAG AA. The portal uses it for links and outlines on
 * its white page and as the background of buttons and the top bar, so it must reach 4.5:1 against
 * white; the text on it is then white or near-black (#111827), whichever contrasts more — always
 * ≥ 4.5:1 for such an accent. A colour too light for links is refused (with the ratio it has), not
 * darkened silently: the org sees the brand colour it set, or a reason.
 */
export function checkAccentColour(value: string): AccentCheck {
  if (!isHexColour(value)) return { ok: false, reason: 'must be a #rgb or #rrggbb colour, e.g. #1d4ed8' };
  const accent = normaliseHexColour(value);
  const ratioOnSurface = contrastRatio(accent, PORTAL_SURFACE_COLOUR);
  if (ratioOnSurface < WCAG_AA_TEXT_RATIO) {
    return { ok: false, reason: `${accent} has a contrast of ${ratioOnSurface.toFixed(2)}:1 on the portal's white page; WCAG AA needs ${WCAG_AA_TEXT_RATIO}:1 for text, so pick a darker colour` };
  }
  const candidates = ['#ffffff', '#111827'].map((c) => ({ c, ratio: contrastRatio(accent, c) })).sort((x, y) => y.ratio - x.ratio);
  const best = candidates[0]!;
  return { ok: true, accent, onAccent: best.c, ratioOnSurface, ratioOnAccent: best.ratio };
}
