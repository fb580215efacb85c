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
    let glyphs = text.chars().count() as u32;
    let scale = scale_for(size, glyphs);
    let pad = scale;
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

/// How many pixels each pixel of a glyph takes on an icon `size` pixels across: the digits are
/// half the icon's height, so they stay readable when a tray host shrinks the icon to 22 or 24
/// pixels (a 32-pixel icon shown at 24 keeps 12-pixel digits), as wide as the icon lets `glyphs`
/// of them be, and never less than the font's own size.
fn scale_for(size: u32, glyphs: u32) -> u32 {
    let tall = size / 2 / 8;
    let wide = size / (glyphs * 7 + 2);
    tall.min(wide).max(1)
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
        let three_rows = [
            ".####.", "##..##", "....##", "..###.", "....##", "##..##", ".####.",
        ];
        // At 16 pixels the glyph is drawn at its own size: font8x8's "3".
        assert_eq!(digits(&badged(&blank(16), 3)), three_rows);
        // At 32 it is half the icon's height: each pixel of the glyph a 2 by 2 block.
        let three = badged(&blank(32), 3);
        let doubled: Vec<String> = three_rows
            .iter()
            .flat_map(|row| {
                let wide: String = row.chars().flat_map(|c| [c, c]).collect();
                [wide.clone(), wide]
            })
            .collect();
        assert_eq!(digits(&three), doubled);
        assert!(count(&three, BADGE) > 0);
        // Only the top-right corner changed.
        for y in 0..32u32 {
            for x in 0..32u32 {
                let at = ((y * 32 + x) * 4) as usize;
                if x < 12 || y >= 20 {
                    assert_eq!(&three.pixels[at..at + 4], &[0, 0, 0, 0], "({x}, {y})");
                }
            }
        }
    }

    /// `image` as a tray host shows it at `size` pixels: each pixel the average of the area it
    /// covers (sampled 4 by 4).
    fn shrunk(image: &Rgba, size: u32) -> Rgba {
        let mut out = blank(size);
        let step = image.width as f32 / size as f32;
        for ty in 0..size {
            for tx in 0..size {
                let mut sum = [0u32; 4];
                for sy in 0..4 {
                    for sx in 0..4 {
                        let x = ((tx as f32 + (sx as f32 + 0.5) / 4.0) * step) as u32;
                        let y = ((ty as f32 + (sy as f32 + 0.5) / 4.0) * step) as u32;
                        let at = ((y * image.width + x) * 4) as usize;
                        for (c, total) in sum.iter_mut().enumerate() {
                            *total += image.pixels[at + c] as u32;
                        }
                    }
                }
                let colour = sum.map(|total| (total / 16) as u8);
                put(&mut out, tx, ty, colour);
            }
        }
        out
    }

    /// The pixels of `image` that read as the digits' white (the green channel, which the badge's
    /// red and a transparent icon lack), as rows of `#` and `.` across the whole icon.
    fn white_rows(image: &Rgba) -> Vec<String> {
        (0..image.height)
            .map(|y| {
                (0..image.width)
                    .map(|x| {
                        let at = ((y * image.width + x) * 4) as usize;
                        if image.pixels[at + 1] >= 0xb0 {
                            '#'
                        } else {
                            '.'
                        }
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn the_count_is_readable_when_a_tray_host_shows_the_icon_at_24_pixels() {
        // The app's icon is 32 pixels; tray hosts show it at 22 to 24.
        let shown: Vec<Vec<String>> = (1..=10)
            .map(|n| white_rows(&shrunk(&badged(&blank(32), n), 24)))
            .collect();
        for (n, rows) in shown.iter().enumerate() {
            let tall = rows.iter().filter(|row| row.contains('#')).count();
            assert!(
                tall >= 10,
                "the count {} is {tall} pixels tall at 24 pixels:\n{}",
                n + 1,
                rows.join("\n")
            );
        }
        for (i, a) in shown.iter().enumerate() {
            for b in &shown[i + 1..] {
                assert_ne!(a, b, "two counts look alike at 24 pixels");
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
        // At 64 pixels each pixel of a glyph is a 4 by 4 block: the "1" is 7 rows of 4.
        assert_eq!(digits(&badged(&icon, 1)).len(), 28);
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
