//! The `SECONDS` values of the command line (`ask --timeout`, `status --timeout`), read alike by
//! every command that takes one.

use std::time::Duration;

/// The longest wait a `SECONDS` option takes: a year.
const MAX_SECONDS: f64 = 365.0 * 86_400.0;

/// A `SECONDS` value (`--timeout`): a decimal number of seconds, more than 0 and at most a year,
/// so that it always makes a [`Duration`]; anything else is a usage error naming the range.
pub fn seconds(text: &str) -> Result<Duration, String> {
    let range = || format!("more than 0 and at most {MAX_SECONDS} (365 days)");
    match text.trim().parse::<f64>() {
        Ok(secs) if secs > 0.0 && secs <= MAX_SECONDS => Ok(Duration::from_secs_f64(secs)),
        Ok(_) => Err(format!("a number of seconds must be {}", range())),
        Err(_) => Err(format!(
            "not a number of seconds: write one {}, e.g. 30 or 0.5",
            range()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_are_a_positive_number_up_to_a_year() {
        assert_eq!(seconds("0.5"), Ok(Duration::from_millis(500)));
        assert_eq!(seconds("60"), Ok(Duration::from_secs(60)));
        assert_eq!(seconds("31536000"), Ok(Duration::from_secs(31_536_000)));
        for bad in [
            "nan",
            "NaN",
            "inf",
            "-inf",
            "-1",
            "-0",
            "0",
            "1e300",
            "31536000.5",
            "",
            "1m",
        ] {
            let error = seconds(bad).expect_err(bad);
            assert!(
                error.contains("at most 31536000 (365 days)"),
                "{bad}: {error}"
            );
        }
    }
}
