"""validate's work on benches/scale.sh's realistic CSV, written with polars: the baseline `msgbatch validate` is measured against (benches/validate_pair.sh).

    python3 benches/validate_polars.py RECIPIENTS.csv REJECTS.csv

It does what `validate` does for that file and its SMS text, and prints the same figures, so that
the two can be checked to agree: the phone column's spellings made one (spaces, hyphens, dots and
brackets dropped; +82 made 0), a number that is not a mobile number rejected, the text with the
row's name and variables counted in EUC-KR bytes as Windows code page 949 (a character it cannot
encode rejects the row; over 90 bytes goes as LMS, over 2,000 is rejected), later repeats of a
number left out, the rejected rows written with their row number and reason, and the chunks of
100 counted. Everything is polars expressions on all cores. The byte count needs a CP949 encoder,
which polars does not have; for a text of ASCII and Hangul syllables alone (1 and 2 bytes in CP949,
1 and 3 in UTF-8) it is exact from the text's UTF-8 length and character count, and only the other
texts go through Python's codec, once a row through `map_elements`.
"""
import json
import sys

import polars as pl

TEXT = "[데모몰] #{이름}님, 쿠폰 #{VAR1}이 도착했어요. #{VAR2}까지 사용 가능합니다."
SMS_BYTES, LMS_BYTES, CHUNK = 90, 2000, 100


def cp949_bytes(text):
    try:
        return len(text.encode("cp949"))
    except UnicodeEncodeError:
        return -1


def main(csv, rejects):
    frame = pl.read_csv(csv, infer_schema=False)
    spelled = pl.col("hp").str.replace_all(r"[\s\-\.\(\)]", "")
    phone = (
        pl.when(spelled.str.starts_with("+82"))
        .then(pl.lit("0") + spelled.str.slice(3))
        .otherwise(spelled)
    )
    pieces = []
    rest = TEXT
    for placeholder, column in (("#{이름}", "name"), ("#{VAR1}", "VAR1"), ("#{VAR2}", "VAR2")):
        before, rest = rest.split(placeholder, 1)
        pieces += [pl.lit(before), pl.col(column).fill_null("")]
    pieces.append(pl.lit(rest))
    text = pl.col("text")
    simple = text.str.contains(r"^[\x00-\x7F\x{AC00}-\x{D7A3}]*$")
    chars = text.str.len_chars().cast(pl.Int64)
    checked = frame.with_columns(
        row=pl.int_range(2, pl.len() + 2),
        phone=phone,
        mobile=phone.str.contains(r"^01[016789][0-9]{7,8}$"),
        text=pl.concat_str(pieces),
    ).with_columns(
        bytes=pl.when(simple).then(chars + (text.str.len_bytes().cast(pl.Int64) - chars) // 2),
    )
    other = checked.filter(pl.col("bytes").is_null()).select(
        "row", bytes=text.map_elements(cp949_bytes, return_dtype=pl.Int64)
    )
    if other.height:
        checked = checked.update(other, on="row")
    checked = checked.with_columns(
        reason=pl.when(~pl.col("mobile"))
        .then(pl.lit("phone_invalid"))
        .when(pl.col("bytes") < 0)
        .then(pl.lit("text_unencodable"))
        .when(pl.col("bytes") > LMS_BYTES)
        .then(pl.lit("text_too_long"))
    )
    checked.filter(pl.col("reason").is_not_null()).select("row", "reason").write_csv(rejects)
    kept = checked.filter(pl.col("reason").is_null())
    first = kept.filter(pl.col("phone").is_first_distinct())
    lanes = first.group_by(pl.when(pl.col("bytes") <= SMS_BYTES).then(pl.lit("sms")).otherwise(pl.lit("lms")).alias("lane")).len()
    per_lane = {lane: count for lane, count in lanes.iter_rows()}
    print(
        json.dumps(
            {
                "rows": frame.height,
                "valid": first.height,
                "rejected": checked.height - kept.height,
                "duplicates": kept.height - first.height,
                "per_lane": per_lane,
                "chunks": {lane: -(-count // CHUNK) for lane, count in per_lane.items()},
            }
        )
    )


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
