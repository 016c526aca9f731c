import { checkAccentColour, contrastRatio, normaliseHexColour, relativeLuminance } from './contrast.js';

describe('contrast (WCAG 2.2, 1.4.3)', () => {
  test('known ratios: black on white is 21, a colour on itself 1, order does not matter', () => {
    expect(contrastRatio('#000', '#fff')).toBeCloseTo(21, 5);
    expect(contrastRatio('#1d4ed8', '#1d4ed8')).toBe(1);
    expect(contrastRatio('#777777', '#ffffff')).toBeCloseTo(4.48, 2);
    expect(contrastRatio('#ffffff', '#777777')).toBeCloseTo(contrastRatio('#777777', '#ffffff'), 10);
    expect(relativeLuminance('#ffffff')).toBe(1);
    expect(normaliseHexColour('#AbC')).toBe('#aabbcc');
  });

  test('a dark accent passes, with white text on it', () => {
    const r = checkAccentColour('#1D4ED8');
    expect(r).toMatchObject({ ok: true, accent: '#1d4ed8', onAccent: '#ffffff' });
    if (r.ok) {
      expect(r.ratioOnSurface).toBeGreaterThanOrEqual(4.5);
      expect(r.ratioOnAccent).toBeGreaterThanOrEqual(4.5);
    }
  });

  test('a light accent is refused with its ratio; not a colour → refused', () => {
    const yellow = checkAccentColour('#ffcc00');
    expect(yellow.ok).toBe(false);
    if (!yellow.ok) expect(yellow.reason).toMatch(/^#ffcc00 has a contrast of 1\.\d\d:1 .*4\.5:1/);
    expect(checkAccentColour('#777777').ok).toBe(false);
    expect(checkAccentColour('#767676').ok).toBe(true);
    for (const bad of ['red', '#12345', 'rgb(0,0,0)', '']) expect(checkAccentColour(bad)).toMatchObject({ ok: false, reason: expect.stringMatching(/#rgb or #rrggbb/) });
  });
});
