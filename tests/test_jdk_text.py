"""Tests for kdump.jdk.text: JDK 17 ``new String(bytes, UTF_8)`` emulation."""

from __future__ import annotations

import itertools
import random
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kdump.jdk.text import decode_utf8_jdk, encode_utf8_jdk, string_split
from tests.corpus import CORPUS

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "jdk_utf8_vectors.txt"
REPL = "\ufffd"


def _load_vectors() -> list[tuple[bytes, bytes]]:
    vectors = []
    for line in FIXTURE.read_text(encoding="ascii").splitlines():
        if not line or line.startswith("#"):
            continue
        src, out = line.split(" ")
        vectors.append((bytes.fromhex(src), bytes.fromhex(out)))
    return vectors


VECTORS = _load_vectors()


def _jdk_reference(src: bytes) -> str:
    """Straight transcription of JDK 17 ``String.decodeUTF8_UTF16`` (doReplace=true).

    Deliberately written as the JDK's byte loop (signed bytes and all), independently
    of the error-handler implementation under test, so the two can be cross-checked
    exhaustively without Java.
    """
    s = [x - 256 if x > 127 else x for x in src]  # Java bytes are signed
    out: list[str] = []
    sp, sl = 0, len(s)

    def not_cont(b: int) -> bool:
        return (b & 0xC0) != 0x80

    while sp < sl:
        b1 = s[sp]
        sp += 1
        if b1 >= 0:
            out.append(chr(b1))
        elif (b1 >> 5) == -2 and (b1 & 0x1E) != 0:
            if sp < sl:
                b2 = s[sp]
                sp += 1
                if not_cont(b2):
                    out.append(REPL)
                    sp -= 1
                else:
                    out.append(chr(((b1 << 6) ^ b2 ^ ((-64 << 6) ^ -128)) & 0xFFFF))
                continue
            out.append(REPL)
            break
        elif (b1 >> 4) == -2:
            if sp + 1 < sl:
                b2, b3 = s[sp], s[sp + 1]
                sp += 2
                if (b1 == -32 and (b2 & 0xE0) == 0x80) or not_cont(b2) or not_cont(b3):
                    out.append(REPL)
                    sp -= 3
                    # malformed3()
                    c1, c2 = s[sp], s[sp + 1]
                    sp += 1 if ((c1 == -32 and (c2 & 0xE0) == 0x80) or not_cont(c2)) else 2
                else:
                    c = ((b1 << 12) ^ (b2 << 6) ^ (b3 ^ ((-32 << 12) ^ (-128 << 6) ^ -128))) & 0xFFFF
                    out.append(REPL if 0xD800 <= c <= 0xDFFF else chr(c))
                continue
            if sp < sl and ((b1 == -32 and (s[sp] & 0xE0) == 0x80) or not_cont(s[sp])):
                out.append(REPL)
                continue
            sp += 1
            out.append(REPL)
            break
        elif (b1 >> 3) == -2:
            if sp + 2 < sl:
                b2, b3, b4 = s[sp], s[sp + 1], s[sp + 2]
                sp += 3
                uc = (
                    (b1 << 18)
                    ^ (b2 << 12)
                    ^ (b3 << 6)
                    ^ (b4 ^ ((-16 << 18) ^ (-128 << 12) ^ (-128 << 6) ^ -128))
                )
                if not_cont(b2) or not_cont(b3) or not_cont(b4) or not 0x10000 <= uc <= 0x10FFFF:
                    out.append(REPL)
                    sp -= 4
                    # malformed4()
                    c1, c2 = s[sp] & 0xFF, s[sp + 1] & 0xFF
                    if (
                        c1 > 0xF4
                        or (c1 == 0xF0 and (c2 < 0x90 or c2 > 0xBF))
                        or (c1 == 0xF4 and (c2 & 0xF0) != 0x80)
                        or not_cont(c2)
                    ):
                        sp += 1
                    elif not_cont(s[sp + 2]):
                        sp += 2
                    else:
                        sp += 3
                else:
                    out.append(chr(uc))
                continue
            u1 = b1 & 0xFF
            if u1 > 0xF4 or (
                sp < sl
                and (
                    (u1 == 0xF0 and not 0x90 <= (s[sp] & 0xFF) <= 0xBF)
                    or (u1 == 0xF4 and (s[sp] & 0xF0) != 0x80)
                    or not_cont(s[sp])
                )
            ):
                out.append(REPL)
                continue
            sp += 1
            out.append(REPL)
            if sp < sl and not_cont(s[sp]):
                continue
            break
        else:
            out.append(REPL)
    return "".join(out)


# --------------------------------------------------------------------------- fixture (JDK oracle)


def test_fixture_is_substantial() -> None:
    assert len(VECTORS) > 4000
    assert FIXTURE.read_text(encoding="ascii").startswith("# Produced with OpenJDK 17")


def test_fixture_vectors() -> None:
    bad = [
        (src.hex(), decode_utf8_jdk(src).encode("utf-8").hex(), out.hex())
        for src, out in VECTORS
        if decode_utf8_jdk(src).encode("utf-8") != out
    ]
    assert bad == []


def test_reference_port_matches_fixture() -> None:
    bad = [src.hex() for src, out in VECTORS if _jdk_reference(src).encode("utf-8") != out]
    assert bad == []


def test_fixture_memoryview_and_bytearray() -> None:
    for src, out in VECTORS[::7]:
        assert decode_utf8_jdk(memoryview(src)).encode("utf-8") == out
        assert decode_utf8_jdk(bytearray(src)).encode("utf-8") == out
        padded = b"xy" + src + b"z"
        assert decode_utf8_jdk(memoryview(padded)[2:-1]).encode("utf-8") == out


def test_fixture_has_python_disagreements() -> None:
    # The fixture must exercise the shapes where Python's own "replace" differs.
    differing = [src for src, out in VECTORS if src.decode("utf-8", "replace").encode("utf-8") != out]
    assert len(differing) > 300


# --------------------------------------------------------------------------- exhaustive (no Java)


def test_exhaustive_one_and_two_bytes() -> None:
    for a in range(256):
        assert decode_utf8_jdk(bytes([a])) == _jdk_reference(bytes([a]))
    for a, b in itertools.product(range(256), repeat=2):
        src = bytes([a, b])
        assert decode_utf8_jdk(src) == _jdk_reference(src), src.hex()


# Every value at which the JDK's decisions change, plus neighbours.
_EDGES = sorted(
    {0x00, 0x41, 0x7F, 0x80, 0x81, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1}
    | {0xEC, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xF7, 0xF8, 0xFF}
)


def test_three_bytes_all_leads_edge_tails() -> None:
    for a in range(0x80, 0x100):
        for b, c in itertools.product(_EDGES, repeat=2):
            src = bytes([a, b, c])
            assert decode_utf8_jdk(src) == _jdk_reference(src), src.hex()


def test_four_bytes_multibyte_leads_edge_tails() -> None:
    leads = [x for x in _EDGES if x >= 0xE0]
    tails = [0x41, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC2, 0xED, 0xF0, 0xF4]
    for a in leads:
        for b, c, d in itertools.product(tails, repeat=3):
            src = bytes([a, b, c, d])
            assert decode_utf8_jdk(src) == _jdk_reference(src), src.hex()
            assert decode_utf8_jdk(b"A" + src + b"Z") == _jdk_reference(b"A" + src + b"Z")


def test_random_high_bytes() -> None:
    rnd = random.Random(20240607)
    alphabet = list(range(0x80, 0x100)) * 2 + list(range(0x80, 0xC0)) + [0x00, 0x0A, 0x41]
    for _ in range(20000):
        src = bytes(rnd.choices(alphabet, k=rnd.randint(1, 12)))
        assert decode_utf8_jdk(src) == _jdk_reference(src), src.hex()


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=64))
def test_property_matches_reference(src: bytes) -> None:
    assert decode_utf8_jdk(src) == _jdk_reference(src)


# --------------------------------------------------------------------------- targeted behaviour


@pytest.mark.parametrize(
    ("src", "expected"),
    [
        (b"", ""),
        (b"plain ascii", "plain ascii"),
        ("h\u00e9llo \u20ac \U0001f600".encode(), "h\u00e9llo \u20ac \U0001f600"),
        (b"\xed\xa0\x80", REPL),  # encoded surrogate: one U+FFFD for 3 bytes (Python: 3)
        (b"\xed\xbf\xbfA", REPL + "A"),
        (b"\xed\xa0A", REPL + "A"),  # ED A0 counts as lead + continuation (Python: 2)
        (b"\xed\xa0", REPL),  # truncated at end (Python: 2)
        (b"\xe0\x80\x80", REPL * 3),  # overlong: lead alone
        (b"\xc0\x80", REPL * 2),
        (b"\xe2\x82", REPL),  # truncated 3-byte at end
        (b"\xf0\x90\x80", REPL),  # truncated 4-byte at end
        (b"\xf0\x90A", REPL + "A"),
        (b"\xf0\x90\x80A", REPL + "A"),
        (b"\xf4\x90\x80\x80", REPL * 4),  # > U+10FFFF
        (b"\xf5\x80\x80\x80", REPL * 4),
        (b"\xff\xfe\x00\x01", REPL * 2 + "\x00\x01"),
    ],
)
def test_known_shapes(src: bytes, expected: str) -> None:
    assert decode_utf8_jdk(src) == expected


def test_never_produces_lone_surrogates() -> None:
    for src, _ in VECTORS:
        text = decode_utf8_jdk(src)
        assert not any(0xD800 <= ord(ch) <= 0xDFFF for ch in text)
        assert encode_utf8_jdk(text) == text.encode("utf-8")


def test_encode_lone_surrogate_like_jdk_printstream() -> None:
    # Checked against JDK 17 PrintStream(out, true, "UTF-8").print(...).
    assert encode_utf8_jdk("a\ud800b") == b"a?b"
    assert encode_utf8_jdk("a\ud83d\ude00b\ud800c\udc00") == b"a\xf0\x9f\x98\x80b?c?"
    assert encode_utf8_jdk("\u20ac") == b"\xe2\x82\xac"


# --------------------------------------------------------------------------- real Kafka output


def _corpus_or_skip() -> Path:
    if not CORPUS.is_dir():
        pytest.skip(f"Kafka reference corpus not present at {CORPUS}")
    return CORPUS


def _expected_print_data_log() -> bytes:
    path = _corpus_or_skip() / "expected/data/plain-0/00000000000000000000.log.print-data-log.txt"
    return path.read_bytes()


@pytest.mark.corpus
def test_real_tool_all_256_byte_values() -> None:
    log = (_corpus_or_skip() / "data/plain-0/00000000000000000000.log").read_bytes()
    value = bytes(range(256))
    assert log.count(value) == 1, "record at offset 11 should hold each byte value once"
    out = _expected_print_data_log()
    start = out.index(b"| offset: 11 ")
    end = out.index(b"\n| offset: 12 ", start)
    line = out[start:end]
    assert b" key: key-11 payload: " in line
    payload = line[line.index(b"payload: ") + len(b"payload: ") :]
    assert decode_utf8_jdk(value).encode("utf-8") == payload
    assert encode_utf8_jdk(decode_utf8_jdk(memoryview(log)[log.index(value) :][:256])) == payload


@pytest.mark.corpus
def test_real_tool_binary_key() -> None:
    log = (_corpus_or_skip() / "data/plain-0/00000000000000000000.log").read_bytes()
    key = b"\xff\xfe\x00\x01"
    # keyLength varint 4 (zigzag 0x08), key bytes, valueLength varint 10 (0x14), "binary-key"
    assert log.count(b"\x08" + key + b"\x14binary-key") == 1
    out = _expected_print_data_log()
    start = out.index(b"| offset: 12 ")
    line = out[start : out.index(b"\n", start)]
    assert b" key: " + decode_utf8_jdk(key).encode("utf-8") + b" payload: binary-key" in line


@pytest.mark.parametrize(
    ("text", "regex", "java"),
    [
        # the examples of String.split(String) in the JDK 17 Javadoc
        ("boo:and:foo", ":", ["boo", "and", "foo"]),
        ("boo:and:foo", "o", ["b", "", ":and:f"]),
        # no match: the whole input, even when empty; only separators: nothing
        ("", ",", [""]),
        ("abc", ",", ["abc"]),
        (",", ",", []),
        (",,,", ",", []),
        # a leading empty piece is kept, trailing ones are dropped, interior ones kept
        (",a", ",", ["", "a"]),
        ("a,,b,,", ",", ["a", "", "b"]),
    ],
)
def test_string_split_is_javas(text: str, regex: str, java: list[str]) -> None:
    assert string_split(re.compile(regex), text) == java
