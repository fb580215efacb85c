//! Tests of the image gate: each format taken, every refusal, the path rules.

use std::io::Cursor;
use std::os::unix::fs::symlink;

use askdesk_core::{ErrorCode, QuestionOption};
use image::{DynamicImage, RgbaImage};

use super::*;

fn encoded(format: ImageFormat, width: u32, height: u32) -> Vec<u8> {
    let picture = RgbaImage::from_fn(width, height, |x, y| {
        image::Rgba([(x * 40) as u8, (y * 60) as u8, 128, 255])
    });
    let picture = match format {
        // JPEG has no alpha channel.
        ImageFormat::Jpeg => DynamicImage::ImageRgb8(DynamicImage::ImageRgba8(picture).to_rgb8()),
        _ => DynamicImage::ImageRgba8(picture),
    };
    let mut out = Cursor::new(Vec::new());
    picture.write_to(&mut out, format).unwrap();
    out.into_inner()
}

/// A PNG of the signature, a header claiming `width`×`height` and an empty data chunk (valid
/// CRCs): its dimensions can be read, but decoding it fails.
fn png_header_only(width: u32, height: u32) -> Vec<u8> {
    let mut header = width.to_be_bytes().to_vec();
    header.extend(height.to_be_bytes());
    header.extend([8, 6, 0, 0, 0]);
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    for (kind, body) in [(b"IHDR", header), (b"IDAT", Vec::new())] {
        let mut chunk = kind.to_vec();
        chunk.extend(&body);
        png.extend((body.len() as u32).to_be_bytes());
        png.extend(&chunk);
        png.extend(crc32(&chunk).to_be_bytes());
    }
    png
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in bytes {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn question(images: Vec<Image>) -> Question {
    Question {
        id: "q".into(),
        question: "Which?".into(),
        images,
        ..Default::default()
    }
}

fn data(bytes: &[u8]) -> Image {
    Image {
        data: Some(b64(bytes)),
        ..Image::default()
    }
}

fn path(path: &Path) -> Image {
    Image {
        path: Some(path.to_str().unwrap().into()),
        ..Image::default()
    }
}

fn refused(images: Vec<Image>, cwd: Option<&Path>, limits: &Limits) -> UserQuestionError {
    make_safe(vec![question(images)], cwd, limits).unwrap_err()
}

fn decoded_png(image: &Image) -> DynamicImage {
    assert_eq!(image.mime.as_deref(), Some("image/png"));
    assert_eq!(image.path, None);
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(image.data.as_ref().unwrap())
        .unwrap();
    assert_eq!(image::guess_format(&bytes).unwrap(), ImageFormat::Png);
    image::load_from_memory(&bytes).unwrap()
}

#[test]
fn each_taken_format_comes_out_as_a_png_of_the_same_size() {
    for format in [
        ImageFormat::Png,
        ImageFormat::Jpeg,
        ImageFormat::Gif,
        ImageFormat::WebP,
    ] {
        let safe = make_safe(
            vec![question(vec![data(&encoded(format, 5, 3))])],
            None,
            &Limits::default(),
        )
        .unwrap();
        let png = decoded_png(&safe[0].images[0]);
        assert_eq!((png.width(), png.height()), (5, 3), "{format:?}");
    }
}

#[test]
fn an_option_image_is_made_safe_too() {
    let mut q = question(Vec::new());
    q.options.push(QuestionOption {
        label: "A".into(),
        images: vec![data(&encoded(ImageFormat::Gif, 2, 2))],
        ..Default::default()
    });
    let safe = make_safe(vec![q], None, &Limits::default()).unwrap();
    decoded_png(&safe[0].options[0].images[0]);
}

#[test]
fn a_malformed_image_is_refused_naming_its_field() {
    let mut png = encoded(ImageFormat::Png, 8, 8);
    png.truncate(png.len() - 20);
    let error = refused(vec![data(&png)], None, &Limits::default());
    assert_eq!(error.code, ErrorCode::BadImage);
    assert!(
        error
            .message
            .starts_with("questions[0].images[0]: a malformed image/png"),
        "{}",
        error.message
    );
}

#[test]
fn base64_that_is_not_base64_is_refused() {
    let image = Image {
        data: Some("not base64 at all!".into()),
        ..Image::default()
    };
    let error = refused(vec![image], None, &Limits::default());
    assert_eq!(error.code, ErrorCode::BadImage);
    assert!(
        error.message.contains("data is not base64"),
        "{}",
        error.message
    );
}

#[test]
fn an_oversized_image_is_refused_naming_the_limit() {
    let png = encoded(ImageFormat::Png, 16, 16);
    let limits = Limits {
        image_bytes: png.len() - 1,
        ..Limits::default()
    };
    let error = refused(vec![data(&png)], None, &limits);
    assert_eq!(error.code, ErrorCode::ImageLimit);
    assert!(
        error.message.ends_with("(image-bytes)"),
        "{}",
        error.message
    );
}

#[test]
fn a_huge_dimension_is_refused_from_the_header_before_decoding() {
    // The file has no pixel data at all: decoding it would fail as malformed, so a limit error
    // shows the refusal came from the header alone.
    for (width, height, limit) in [
        (100_000, 10, "(image-side)"),
        (10, 100_000, "(image-side)"),
        (5000, 5000, "(image-pixels)"),
    ] {
        let error = refused(
            vec![data(&png_header_only(width, height))],
            None,
            &Limits::default(),
        );
        assert_eq!(error.code, ErrorCode::ImageLimit, "{}", error.message);
        assert!(error.message.ends_with(limit), "{}", error.message);
    }
    // Within the limits the same header-only file is malformed, as said above.
    let error = refused(
        vec![data(&png_header_only(10, 10))],
        None,
        &Limits::default(),
    );
    assert_eq!(error.code, ErrorCode::BadImage);
}

#[test]
fn a_wrong_type_is_refused() {
    // A BMP's signature and file header: a type the decoders here do not take.
    let bmp = b"BM\x46\x00\x00\x00\x00\x00\x00\x00\x36\x00\x00\x00\x28\x00\x00\x00";
    let error = refused(vec![data(bmp)], None, &Limits::default());
    assert_eq!(error.code, ErrorCode::BadImage);
    assert!(
        error.message.contains("only PNG, JPEG, GIF and WebP"),
        "{}",
        error.message
    );

    let svg = b"<svg xmlns='http://www.w3.org/2000/svg'><image href='http://x/'/></svg>";
    let error = refused(vec![data(svg)], None, &Limits::default());
    assert!(
        error
            .message
            .ends_with("not a PNG, JPEG, GIF or WebP image"),
        "{}",
        error.message
    );
}

#[test]
fn a_declared_type_must_match_the_content() {
    let image = Image {
        mime: Some("image/png".into()),
        ..data(&encoded(ImageFormat::Jpeg, 2, 2))
    };
    let error = refused(vec![image], None, &Limits::default());
    assert_eq!(error.code, ErrorCode::BadImage);
    assert!(
        error.message.contains("the content is image/jpeg"),
        "{}",
        error.message
    );
}

#[test]
fn data_and_path_together_or_neither_are_refused() {
    let both = Image {
        path: Some("/x.png".into()),
        ..data(&encoded(ImageFormat::Png, 1, 1))
    };
    assert!(refused(vec![both], None, &Limits::default())
        .message
        .ends_with("give data or path, not both"));
    assert!(refused(vec![Image::default()], None, &Limits::default())
        .message
        .ends_with("an image needs data or path"));
}

#[test]
fn the_request_limits_count_every_image() {
    let png = encoded(ImageFormat::Png, 4, 4);
    let limits = Limits {
        images: 2,
        ..Limits::default()
    };
    let error = refused(vec![data(&png), data(&png), data(&png)], None, &limits);
    assert_eq!(error.code, ErrorCode::ImageLimit);
    assert!(
        error.message.starts_with("questions[0].images[2]:"),
        "{}",
        error.message
    );
    assert!(error.message.ends_with("(images)"), "{}", error.message);

    let limits = Limits {
        request_bytes: png.len() * 2 - 1,
        ..Limits::default()
    };
    let error = refused(vec![data(&png), data(&png)], None, &limits);
    assert!(
        error.message.ends_with("(request-bytes)"),
        "{}",
        error.message
    );

    let limits = Limits {
        request_pixels: 31,
        ..Limits::default()
    };
    let error = refused(vec![data(&png), data(&png)], None, &limits);
    assert!(
        error.message.ends_with("(request-pixels)"),
        "{}",
        error.message
    );
}

#[test]
fn a_path_is_read_relative_to_the_agents_folder() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("shot.png"), encoded(ImageFormat::Png, 3, 3)).unwrap();
    let relative = Image {
        path: Some("shot.png".into()),
        ..Image::default()
    };
    let safe = make_safe(
        vec![question(vec![relative.clone()])],
        Some(dir.path()),
        &Limits::default(),
    )
    .unwrap();
    decoded_png(&safe[0].images[0]);
    // Without a working directory a relative path means nothing.
    let error = refused(vec![relative], None, &Limits::default());
    assert!(error.message.contains("meta.cwd"), "{}", error.message);
}

#[test]
fn a_symlink_out_of_the_agents_folder_is_refused() {
    let outside = tempfile::tempdir().unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret.png");
    fs::write(&secret, encoded(ImageFormat::Png, 2, 2)).unwrap();
    symlink(&secret, cwd.path().join("link.png")).unwrap();
    symlink(outside.path(), cwd.path().join("dir")).unwrap();
    for named in [
        cwd.path().join("link.png"),
        PathBuf::from("link.png"),
        PathBuf::from("dir/secret.png"),
        PathBuf::from("./link.png"),
    ] {
        let error = refused(vec![path(&named)], Some(cwd.path()), &Limits::default());
        assert_eq!(error.code, ErrorCode::BadImage);
        assert!(
            error
                .message
                .ends_with("leads through a link out of the agent's working directory"),
            "{named:?}: {}",
            error.message
        );
    }
    // Without a working directory no link is followed at all.
    let error = refused(
        vec![path(&cwd.path().join("link.png"))],
        None,
        &Limits::default(),
    );
    assert!(
        error.message.contains("leads through a link"),
        "{}",
        error.message
    );
}

#[test]
fn a_symlink_inside_the_agents_folder_is_followed() {
    let cwd = tempfile::tempdir().unwrap();
    fs::write(cwd.path().join("real.png"), encoded(ImageFormat::Png, 2, 2)).unwrap();
    symlink(cwd.path().join("real.png"), cwd.path().join("alias.png")).unwrap();
    let safe = make_safe(
        vec![question(vec![path(Path::new("alias.png"))])],
        Some(cwd.path()),
        &Limits::default(),
    )
    .unwrap();
    decoded_png(&safe[0].images[0]);
}

#[test]
fn a_device_a_fifo_and_a_directory_are_never_read() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    let name = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
    for named in [
        Path::new("/dev/zero"),
        Path::new("/dev/null"),
        &fifo,
        dir.path(),
    ] {
        let error = refused(vec![path(named)], Some(dir.path()), &Limits::default());
        assert_eq!(error.code, ErrorCode::BadImage);
        assert!(
            error.message.contains("is not a regular file"),
            "{named:?}: {}",
            error.message
        );
    }
}

#[test]
fn an_oversized_file_is_refused_before_it_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let png = encoded(ImageFormat::Png, 8, 8);
    fs::write(dir.path().join("big.png"), &png).unwrap();
    let limits = Limits {
        image_bytes: 10,
        ..Limits::default()
    };
    let error = refused(vec![path(Path::new("big.png"))], Some(dir.path()), &limits);
    assert_eq!(error.code, ErrorCode::ImageLimit);
    assert!(
        error.message.ends_with("(image-bytes)"),
        "{}",
        error.message
    );
}

#[tokio::test]
async fn the_gate_reads_paths_from_the_agents_cwd() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("a.webp"), encoded(ImageFormat::WebP, 2, 2)).unwrap();
    let agent: AgentInfo = serde_json::from_value(serde_json::json!({
        "id": "a", "meta": { "cwd": dir.path() }
    }))
    .unwrap();
    let safe = Gate::default()
        .make_safe(vec![question(vec![path(Path::new("a.webp"))])], Some(agent))
        .await
        .unwrap();
    decoded_png(&safe[0].images[0]);
}

fn answered_with(images: Vec<Image>) -> Answer {
    let mut item = askdesk_core::AnswerItem::skipped("q");
    item.custom = Some("like this".into());
    item.images = images;
    Answer {
        answers: vec![item],
    }
}

#[test]
fn an_answers_image_comes_out_as_a_png() {
    let answer = answered_with(vec![data(&encoded(ImageFormat::WebP, 4, 6))]);
    let safe = make_answer_safe(answer, &Limits::default()).unwrap();
    let png = decoded_png(&safe.answers[0].images[0]);
    assert_eq!((png.width(), png.height()), (4, 6));
    assert_eq!(safe.answers[0].custom.as_deref(), Some("like this"));
}

#[test]
fn a_malformed_answer_image_is_a_bad_answer_naming_its_field() {
    let mut png = encoded(ImageFormat::Png, 8, 8);
    png.truncate(png.len() - 20);
    let error = make_answer_safe(answered_with(vec![data(&png)]), &Limits::default()).unwrap_err();
    assert_eq!(error.code, ErrorCode::BadAnswer);
    assert!(
        error.message.starts_with(
            "the answerer sent a bad answer: answers[0].images[0]: a malformed image/png"
        ),
        "{}",
        error.message
    );
}

#[test]
fn an_oversized_answer_image_is_a_bad_answer_naming_the_limit() {
    let png = encoded(ImageFormat::Png, 16, 16);
    let limits = Limits {
        image_bytes: png.len() - 1,
        ..Limits::default()
    };
    let error = make_answer_safe(answered_with(vec![data(&png)]), &limits).unwrap_err();
    assert_eq!(error.code, ErrorCode::BadAnswer);
    assert!(
        error.message.ends_with("(image-bytes)"),
        "{}",
        error.message
    );
    // The answer's images together count against the request limits too.
    let limits = Limits {
        images: 1,
        ..Limits::default()
    };
    let two = answered_with(vec![data(&png), data(&png)]);
    let error = make_answer_safe(two, &limits).unwrap_err();
    assert!(
        error
            .message
            .starts_with("the answerer sent a bad answer: answers[0].images[1]: image number 2"),
        "{}",
        error.message
    );
}

#[test]
fn an_answers_image_path_is_never_read() {
    let folder = tempfile::tempdir().unwrap();
    let file = folder.path().join("shot.png");
    fs::write(&file, encoded(ImageFormat::Png, 2, 2)).unwrap();
    let error = make_answer_safe(answered_with(vec![path(&file)]), &Limits::default()).unwrap_err();
    assert_eq!(error.code, ErrorCode::BadAnswer);
    assert!(
        error.message.contains("a path is never read"),
        "{}",
        error.message
    );
}

#[test]
fn a_thumbnail_fits_its_side_and_keeps_the_shape() {
    let safe =
        make_picture_safe(&b64(&encoded(ImageFormat::Png, 40, 20)), &Limits::default()).unwrap();
    let (width, height, rgba) = thumbnail_rgba(&safe, 10).unwrap();
    assert_eq!((width, height, rgba.len()), (10, 5, 10 * 5 * 4));
    let (width, height, _) = thumbnail_rgba(&safe, 100).unwrap();
    assert_eq!((width, height), (40, 20));
    // Only an image the broker made safe is drawn.
    assert_eq!(
        thumbnail_rgba(&data(&encoded(ImageFormat::Gif, 2, 2)), 10),
        None
    );
}
