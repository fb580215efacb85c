//! askdesk-image: the images agents attach to questions (protocol 1.4), made safe before any
//! answerer or page sees them.
//!
//! An image comes as base64 `data` or as a `path` the asking agent names. A path is read only when
//! it is a regular file, and a path that leads through a link must stay inside the agent's working
//! directory (`meta.cwd`); nothing is fetched from the network. The bytes must be PNG, JPEG, GIF or
//! WebP by their content; the dimensions are read from the header and a huge image is refused
//! before anything is decoded; the image is then decoded (a GIF's first frame) within memory
//! limits and re-encoded as PNG, so no file as the agent made it reaches a web view's decoders.
//! [`Limits`] bounds each image and each request; every refusal names the limit it hit.

use std::fs::{self, File, OpenOptions};
use std::future::Future;
use std::io::{Cursor, Read};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Component, Path, PathBuf};
use std::pin::Pin;

use askdesk_core::{meta, AgentInfo, Answer, Image, ImageGate, Question, UserQuestionError};
use base64::Engine as _;
use image::codecs::png::PngEncoder;
use image::{ExtendedColorType, ImageEncoder, ImageFormat, ImageReader};

/// Bounds on the images of one request (protocol 1.4 lists them with these defaults).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Bytes of one image as sent or read (after base64 decoding): `image-bytes`.
    pub image_bytes: usize,
    /// Width or height of one image, in pixels: `image-side`.
    pub image_side: u32,
    /// Pixels of one image (width × height): `image-pixels`.
    pub image_pixels: u64,
    /// Images in one request: `images`.
    pub images: usize,
    /// Bytes of all the request's images as sent or read: `request-bytes`.
    pub request_bytes: usize,
    /// Pixels of all the request's images: `request-pixels`.
    pub request_pixels: u64,
    /// Bytes of all the request's re-encoded PNGs: `request-png-bytes`.
    pub request_png_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            image_bytes: 8 * 1024 * 1024,
            image_side: 8192,
            image_pixels: 4096 * 4096,
            images: 16,
            request_bytes: 16 * 1024 * 1024,
            request_pixels: 2 * 4096 * 4096,
            request_png_bytes: 32 * 1024 * 1024,
        }
    }
}

/// Why an image was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// A limit was exceeded: `limit` is its stable name (`image-bytes`, ...).
    Limit {
        limit: &'static str,
        problem: String,
    },
    /// Malformed, of a refused type, or a path that is not read.
    Bad(String),
}

impl Refusal {
    fn limit(
        limit: &'static str,
        what: impl std::fmt::Display,
        max: impl std::fmt::Display,
    ) -> Self {
        Refusal::Limit {
            limit,
            problem: format!("{what} is over the limit of {max} ({limit})"),
        }
    }

    /// The ask's error for the image at `field` (`questions[0].images[1]`).
    pub fn into_error(self, field: &str) -> UserQuestionError {
        match self {
            Refusal::Limit { problem, .. } => UserQuestionError::image_limit(field, problem),
            Refusal::Bad(problem) => UserQuestionError::bad_image(field, problem),
        }
    }

    /// What was wrong, as a person reads it: for a limit, ending with the limit's name.
    pub fn problem(&self) -> &str {
        match self {
            Refusal::Limit { problem, .. } | Refusal::Bad(problem) => problem,
        }
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.problem())
    }
}

/// One image made safe: a PNG and its size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Safe {
    pub png: Vec<u8>,
    pub width: u32,
    pub height: u32,
}

/// The media type of each format taken; any other format is refused.
fn taken_mime(format: ImageFormat) -> Option<&'static str> {
    match format {
        ImageFormat::Png => Some("image/png"),
        ImageFormat::Jpeg => Some("image/jpeg"),
        ImageFormat::Gif => Some("image/gif"),
        ImageFormat::WebP => Some("image/webp"),
        _ => None,
    }
}

/// `bytes` decoded and re-encoded as PNG, within the per-image limits. The type is read from the
/// content (never a name); a `declared` media type must agree with it. The dimensions are read
/// from the header first, so a huge image is refused before it is decoded.
pub fn reencode(bytes: &[u8], declared: Option<&str>, limits: &Limits) -> Result<Safe, Refusal> {
    if bytes.len() > limits.image_bytes {
        return Err(Refusal::limit(
            "image-bytes",
            format_args!("an image of {} bytes", bytes.len()),
            format_args!("{} bytes per image", limits.image_bytes),
        ));
    }
    let format = image::guess_format(bytes)
        .map_err(|_| Refusal::Bad("not a PNG, JPEG, GIF or WebP image".into()))?;
    let mime = taken_mime(format).ok_or_else(|| {
        Refusal::Bad(format!(
            "a {} image; only PNG, JPEG, GIF and WebP are taken",
            format.extensions_str().first().unwrap_or(&"other")
        ))
    })?;
    if let Some(declared) = declared {
        if !declared.trim().eq_ignore_ascii_case(mime) {
            return Err(Refusal::Bad(format!(
                "declared {declared:?} but the content is {mime}"
            )));
        }
    }
    let malformed = |error: image::ImageError| Refusal::Bad(format!("a malformed {mime}: {error}"));
    let (width, height) = ImageReader::with_format(Cursor::new(bytes), format)
        .into_dimensions()
        .map_err(malformed)?;
    let side = width.max(height);
    if side > limits.image_side {
        return Err(Refusal::limit(
            "image-side",
            format_args!("an image of {width}×{height} pixels"),
            format_args!("{} pixels a side", limits.image_side),
        ));
    }
    let pixels = u64::from(width) * u64::from(height);
    if pixels > limits.image_pixels {
        return Err(Refusal::limit(
            "image-pixels",
            format_args!("an image of {width}×{height} pixels"),
            format_args!("{} pixels per image", limits.image_pixels),
        ));
    }
    let mut reader = ImageReader::with_format(Cursor::new(bytes), format);
    let mut bounds = image::Limits::default();
    bounds.max_image_width = Some(limits.image_side);
    bounds.max_image_height = Some(limits.image_side);
    // Room for the widest pixel these formats decode to (16-bit RGBA), and the decoder's own.
    bounds.max_alloc = Some(pixels.saturating_mul(8).saturating_add(1 << 20));
    reader.limits(bounds);
    let decoded = reader.decode().map_err(malformed)?;
    let rgba = decoded.into_rgba8();
    let mut png = Vec::new();
    PngEncoder::new(&mut png)
        .write_image(
            rgba.as_raw(),
            rgba.width(),
            rgba.height(),
            ExtendedColorType::Rgba8,
        )
        .map_err(|error| Refusal::Bad(format!("could not be re-encoded: {error}")))?;
    Ok(Safe {
        png,
        width: rgba.width(),
        height: rgba.height(),
    })
}

/// `path` as the system would resolve it without following links: `.` dropped, `..` taking
/// the previous component off.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The bytes of the file at `path` (relative to `cwd` unless absolute), at most `max_bytes`.
///
/// Read only when it is a regular file (never a device, fifo, socket or directory: those are not
/// even opened); a path that leads through a link, or through `..` past one, must end inside
/// `cwd`. The file is opened without following a link and checked again once open, so a file
/// swapped meanwhile is refused.
pub fn read_file(path: &str, cwd: Option<&Path>, max_bytes: usize) -> Result<Vec<u8>, Refusal> {
    let cwd = cwd.filter(|cwd| cwd.is_absolute());
    let given = Path::new(path);
    let full = if given.is_absolute() {
        given.to_path_buf()
    } else {
        cwd.ok_or_else(|| {
            Refusal::Bad(format!(
                "{path:?} is relative, and the agent gave no working directory (meta.cwd)"
            ))
        })?
        .join(given)
    };
    let unreadable =
        |error: std::io::Error| Refusal::Bad(format!("{path:?} cannot be read: {error}"));
    let real = fs::canonicalize(&full).map_err(unreadable)?;
    if real != lexical(&full) {
        let inside = cwd
            .and_then(|cwd| fs::canonicalize(cwd).ok())
            .is_some_and(|cwd| real.starts_with(cwd));
        if !inside {
            return Err(Refusal::Bad(format!(
                "{path:?} leads through a link out of the agent's working directory"
            )));
        }
    }
    let seen = fs::symlink_metadata(&real).map_err(unreadable)?;
    if !seen.file_type().is_file() {
        return Err(Refusal::Bad(format!(
            "{path:?} is not a regular file (a device, fifo, socket or directory is never read)"
        )));
    }
    let file: File = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(&real)
        .map_err(unreadable)?;
    let opened = file.metadata().map_err(unreadable)?;
    if !opened.file_type().is_file() || opened.dev() != seen.dev() || opened.ino() != seen.ino() {
        return Err(Refusal::Bad(format!("{path:?} changed while it was read")));
    }
    let too_big = |size: u64| {
        Refusal::limit(
            "image-bytes",
            format_args!("an image of {size} bytes"),
            format_args!("{max_bytes} bytes per image"),
        )
    };
    if opened.len() > max_bytes as u64 {
        return Err(too_big(opened.len()));
    }
    let mut bytes = Vec::with_capacity(opened.len() as usize);
    file.take(max_bytes as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(unreadable)?;
    if bytes.len() > max_bytes {
        return Err(too_big(bytes.len() as u64));
    }
    Ok(bytes)
}

/// What a request's images have used of the per-request limits so far.
#[derive(Default)]
struct Budget {
    images: usize,
    bytes: usize,
    pixels: u64,
    png_bytes: usize,
}

/// One image as asked made safe: `data` or `path` read, re-encoded, counted against `budget`.
fn make_one_safe(
    image: &Image,
    cwd: Option<&Path>,
    limits: &Limits,
    budget: &mut Budget,
) -> Result<Image, Refusal> {
    budget.images += 1;
    if budget.images > limits.images {
        return Err(Refusal::limit(
            "images",
            format_args!("image number {}", budget.images),
            format_args!("{} images per request", limits.images),
        ));
    }
    let bytes = match (&image.data, &image.path) {
        (Some(_), Some(_)) => return Err(Refusal::Bad("give data or path, not both".into())),
        (None, None) => return Err(Refusal::Bad("an image needs data or path".into())),
        (Some(data), None) => {
            // Four base64 characters carry three bytes: refuse a long text before decoding it.
            if data.len() / 4 * 3 > limits.image_bytes + 3 {
                return Err(Refusal::limit(
                    "image-bytes",
                    format_args!("an image of about {} bytes", data.len() / 4 * 3),
                    format_args!("{} bytes per image", limits.image_bytes),
                ));
            }
            base64::engine::general_purpose::STANDARD
                .decode(data)
                .map_err(|error| Refusal::Bad(format!("data is not base64: {error}")))?
        }
        (None, Some(path)) => read_file(path, cwd, limits.image_bytes)?,
    };
    budget.bytes += bytes.len();
    if budget.bytes > limits.request_bytes {
        return Err(Refusal::limit(
            "request-bytes",
            format_args!("images of {} bytes together", budget.bytes),
            format_args!("{} bytes per request", limits.request_bytes),
        ));
    }
    let safe = reencode(&bytes, image.mime.as_deref(), limits)?;
    budget.pixels += u64::from(safe.width) * u64::from(safe.height);
    if budget.pixels > limits.request_pixels {
        return Err(Refusal::limit(
            "request-pixels",
            format_args!("images of {} pixels together", budget.pixels),
            format_args!("{} pixels per request", limits.request_pixels),
        ));
    }
    budget.png_bytes += safe.png.len();
    if budget.png_bytes > limits.request_png_bytes {
        return Err(Refusal::limit(
            "request-png-bytes",
            format_args!("re-encoded images of {} bytes together", budget.png_bytes),
            format_args!("{} bytes per request", limits.request_png_bytes),
        ));
    }
    Ok(Image {
        mime: Some(Image::SAFE_MIME.to_owned()),
        data: Some(base64::engine::general_purpose::STANDARD.encode(&safe.png)),
        path: None,
    })
}

/// Every image of the batch made safe, in batch order (a question's images, then its options'),
/// or the error for the first refused one (`BAD_IMAGE` or `IMAGE_LIMIT`, naming its field).
pub fn make_safe(
    mut questions: Vec<Question>,
    cwd: Option<&Path>,
    limits: &Limits,
) -> Result<Vec<Question>, UserQuestionError> {
    let mut budget = Budget::default();
    let mut each = |images: &mut Vec<Image>, field: &dyn Fn(usize) -> String| {
        for (k, image) in images.iter_mut().enumerate() {
            *image = make_one_safe(image, cwd, limits, &mut budget)
                .map_err(|refusal| refusal.into_error(&field(k)))?;
        }
        Ok::<(), UserQuestionError>(())
    };
    for (i, question) in questions.iter_mut().enumerate() {
        each(&mut question.images, &|k| {
            format!("questions[{i}].images[{k}]")
        })?;
        for (j, option) in question.options.iter_mut().enumerate() {
            each(&mut option.images, &|k| {
                format!("questions[{i}].options[{j}].images[{k}]")
            })?;
        }
    }
    Ok(questions)
}

/// One picture the person gives (pasted or dropped in the desk's dialog; standard base64), made
/// safe as an answer's image is, so the page shows only a re-encoded PNG and a refusal names its
/// limit at once. The broker checks the answer's images again, together, when it is sent.
pub fn make_picture_safe(data: &str, limits: &Limits) -> Result<Image, Refusal> {
    let image = Image {
        data: Some(data.to_owned()),
        ..Image::default()
    };
    make_one_safe(&image, None, limits, &mut Budget::default())
}

/// An image the broker made safe, scaled to fit `max_side` pixels a side (never enlarged), as
/// width, height and RGBA pixels: for a notification's `image-data` hint. `None` for anything but
/// a safe PNG.
pub fn thumbnail_rgba(image: &Image, max_side: u32) -> Option<(u32, u32, Vec<u8>)> {
    let png = safe_png(image).ok()?;
    let decoded = image::load_from_memory_with_format(&png, ImageFormat::Png).ok()?;
    let small = if decoded.width().max(decoded.height()) > max_side {
        decoded.thumbnail(max_side, max_side)
    } else {
        decoded
    };
    let rgba = small.into_rgba8();
    Some((rgba.width(), rgba.height(), rgba.into_raw()))
}

/// The PNG bytes of an image the broker made safe (`image/png` base64 `data`), to write to a file;
/// anything else is refused.
pub fn safe_png(image: &Image) -> Result<Vec<u8>, Refusal> {
    let data = match (&image.mime, &image.data, &image.path) {
        (Some(mime), Some(data), None) if mime == Image::SAFE_MIME => data,
        _ => return Err(Refusal::Bad("not an image the broker made safe".into())),
    };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data)
        .map_err(|error| Refusal::Bad(format!("data is not base64: {error}")))?;
    match image::guess_format(&bytes) {
        Ok(ImageFormat::Png) => Ok(bytes),
        _ => Err(Refusal::Bad("not a PNG".into())),
    }
}

/// Every image of an answer made safe (a re-encoded PNG as `data`), in item order, under the same
/// [`Limits`] as a request's; or `BAD_ANSWER` naming the first refused one's field
/// (`answers[0].images[1]`) and, for a limit, the limit. An answer's image gives `data`: a `path`
/// is never read, since the answerer's files are not the asker's.
pub fn make_answer_safe(answer: Answer, limits: &Limits) -> Result<Answer, UserQuestionError> {
    make_answer_pictures_safe(answer, limits).map_err(UserQuestionError::bad_answer)
}

/// [`make_answer_safe`]'s work, its refusal as a person reads it: the first refused picture's field
/// and why (`answers[0].images[1]: ... (image-side)`), for a remote device to show.
pub fn make_answer_pictures_safe(mut answer: Answer, limits: &Limits) -> Result<Answer, String> {
    let mut budget = Budget::default();
    for (i, item) in answer.answers.iter_mut().enumerate() {
        for (k, image) in item.images.iter_mut().enumerate() {
            let refused = |refusal: Refusal| format!("answers[{i}].images[{k}]: {refusal}");
            if image.path.is_some() {
                return Err(refused(Refusal::Bad(
                    "an answer's image gives data; a path is never read".into(),
                )));
            }
            *image = make_one_safe(image, None, limits, &mut budget).map_err(refused)?;
        }
    }
    Ok(answer)
}

/// The [`ImageGate`] the brokers use: [`make_safe`] on a blocking thread, with paths read from
/// the asking agent's `meta.cwd`.
#[derive(Debug, Default)]
pub struct Gate {
    pub limits: Limits,
}

impl ImageGate for Gate {
    fn make_safe(
        &self,
        questions: Vec<Question>,
        agent: Option<AgentInfo>,
    ) -> Pin<Box<dyn Future<Output = Result<Vec<Question>, UserQuestionError>> + Send>> {
        let limits = self.limits;
        let cwd = agent
            .as_ref()
            .and_then(|agent| agent.meta_str(meta::CWD))
            .map(PathBuf::from);
        Box::pin(async move {
            tokio::task::spawn_blocking(move || make_safe(questions, cwd.as_deref(), &limits))
                .await
                .unwrap_or_else(|_| {
                    Err(UserQuestionError::bad_image(
                        "questions",
                        "the images could not be processed",
                    ))
                })
        })
    }

    fn make_answer_safe(
        &self,
        answer: Answer,
    ) -> Pin<Box<dyn Future<Output = Result<Answer, UserQuestionError>> + Send>> {
        let limits = self.limits;
        Box::pin(async move {
            tokio::task::spawn_blocking(move || make_answer_safe(answer, &limits))
                .await
                .unwrap_or_else(|_| {
                    Err(UserQuestionError::bad_answer(
                        "the answer's images could not be processed",
                    ))
                })
        })
    }
}

#[cfg(test)]
mod tests;
