//! The tray icon with the number of waiting questions drawn on it: a red badge in its top-right
//! corner with the count in white ("9+" beyond nine), so the tray says how many wait at a glance
//! (a tray host shows the icon, and many show no title or tooltip beside it).
//!
//! Pure pixel work on RGBA buffers; the desktop hands the result to its tray icon.

use font8x8::legacy::BASIC_LEGACY;

/// An RGBA image, 8 bits a channel, rows top to bottom.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rgba {
    pub width: u32,
    pub height: u32,
    pub pixels: Vec<u8>,
}

/// The badge's fill and the count's colour.
pub const BADGE: [u8; 4] = [0xd9, 0x30, 0x25, 0xff];
pub const DIGITS: [u8; 4] = [0xff, 0xff, 0xff, 0xff];

/// What the badge says for `waiting` questions: nothing for none, the number up to nine, "9+".
pub fn label(waiting: usize) -> Option<String> {
    match waiting {
        0 => None,
        1..=9 => Some(waiting.to_string()),
        _ => Some("9+".to_owned()),
    }
}

/// The icon as the tray shows it with `waiting` questions: `icon` itself for none.
pub fn badged(icon: &Rgba, waiting: usize) -> Rgba {
    let mut out = icon.clone();
    let Some(text) = label(waiting) else {
        return out;
    };
    let size = icon.width.min(icon.height);
    // The glyphs take about a third of the icon's height, so they stay readable when a tray host
    // shows the icon at 22 pixels.
    let scale = ((size as f32 * 0.36 / 8.0).round() as u32).max(1);
    let pad = scale.max(1) * 2;
    let glyphs = text.chars().count() as u32;
    let text_width = glyphs * 7 * scale;
    let height = (8 * scale + 2 * pad).min(icon.height);
    let width = (text_width + 2 * pad).max(height).min(icon.width);
    let left = icon.width - width;
    let radius = height as f32 / 2.0;
    for y in 0..height {
        for x in 0..width {
            // A pill: the rectangle with its ends rounded.
            let cx = (x as f32 + 0.5).clamp(radius, width as f32 - radius);
            let (dx, dy) = (x as f32 + 0.5 - cx, y as f32 + 0.5 - radius);
            if dx * dx + dy * dy <= radius * radius {
                put(&mut out, left + x, y, BADGE);
            }
        }
    }
    let top = (height - 8 * scale) / 2;
    let start = left + (width - text_width) / 2;
    for (n, c) in text.chars().enumerate() {
        let glyph = BASIC_LEGACY[(c as usize).min(127)];
        // The glyphs are 8 wide with their blank column on the right: 7 are drawn.
        for (row, bits) in glyph.iter().enumerate() {
            for col in 0..7u32 {
                if bits & (1 << col) == 0 {
                    continue;
                }
                for sy in 0..scale {
                    for sx in 0..scale {
                        let x = start + (n as u32 * 7 + col) * scale + sx;
                        let y = top + row as u32 * scale + sy;
                        put(&mut out, x, y, DIGITS);
                    }
                }
            }
        }
    }
    out
}

fn put(image: &mut Rgba, x: u32, y: u32, colour: [u8; 4]) {
    if x < image.width && y < image.height {
        let at = ((y * image.width + x) * 4) as usize;
        image.pixels[at..at + 4].copy_from_slice(&colour);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blank(size: u32) -> Rgba {
        Rgba {
            width: size,
            height: size,
            pixels: vec![0; (size * size * 4) as usize],
        }
    }

    fn count(image: &Rgba, colour: [u8; 4]) -> usize {
        image.pixels.chunks(4).filter(|p| *p == colour).count()
    }

    /// The white pixels of the badge as rows of `#` and `.`, cropped to where they are.
    fn digits(image: &Rgba) -> Vec<String> {
        let white = |x: u32, y: u32| {
            let at = ((y * image.width + x) * 4) as usize;
            image.pixels[at..at + 4] == DIGITS
        };
        let rows: Vec<u32> = (0..image.height)
            .filter(|&y| (0..image.width).any(|x| white(x, y)))
            .collect();
        let cols: Vec<u32> = (0..image.width)
            .filter(|&x| (0..image.height).any(|y| white(x, y)))
            .collect();
        let (Some(&x0), Some(&x1)) = (cols.first(), cols.last()) else {
            return Vec::new();
        };
        rows.iter()
            .map(|&y| {
                (x0..=x1)
                    .map(|x| if white(x, y) { '#' } else { '.' })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn the_label_is_the_count_up_to_nine() {
        assert_eq!(label(0), None);
        assert_eq!(label(3).as_deref(), Some("3"));
        assert_eq!(label(9).as_deref(), Some("9"));
        assert_eq!(label(10).as_deref(), Some("9+"));
        assert_eq!(label(250).as_deref(), Some("9+"));
    }

    #[test]
    fn no_question_leaves_the_icon_as_it_is() {
        let icon = blank(32);
        assert_eq!(badged(&icon, 0), icon);
    }

    #[test]
    fn the_badge_draws_the_digit_s_glyph_in_the_top_right_corner() {
        let icon = blank(32);
        let three = badged(&icon, 3);
        // At 32 pixels the glyph is drawn at its own size: font8x8's "3".
        assert_eq!(
            digits(&three),
            [".####.", "##..##", "....##", "..###.", "....##", "##..##", ".####."]
        );
        assert!(count(&three, BADGE) > 0);
        // Only the top-right corner changed.
        for y in 0..32u32 {
            for x in 0..32u32 {
                let at = ((y * 32 + x) * 4) as usize;
                if x < 16 || y >= 16 {
                    assert_eq!(&three.pixels[at..at + 4], &[0, 0, 0, 0], "({x}, {y})");
                }
            }
        }
    }

    #[test]
    fn each_count_draws_a_different_icon_and_nine_plus_beyond() {
        let icon = blank(64);
        let drawn: Vec<Rgba> = (1..=10).map(|n| badged(&icon, n)).collect();
        for (i, a) in drawn.iter().enumerate() {
            for b in &drawn[i + 1..] {
                assert_ne!(digits(a), digits(b));
            }
        }
        assert_eq!(badged(&icon, 10), badged(&icon, 42), "9+ for ten and more");
        // At 64 pixels each pixel of a glyph is a 3 by 3 block: the "1" is 7 rows of 3.
        assert_eq!(digits(&badged(&icon, 1)).len(), 21);
    }

    #[test]
    fn a_badge_fits_any_icon() {
        for size in [16, 22, 32, 128, 256] {
            let drawn = badged(&blank(size), 12);
            assert_eq!(drawn.pixels.len(), (size * size * 4) as usize);
            assert!(count(&drawn, DIGITS) > 0, "{size}");
        }
    }
}
