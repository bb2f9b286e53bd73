"""Test vectors from ../shared/docs/dumplogsegments-spec.md (§3.2, §3.3), cross-checked there with kafka-python."""

# v2 batch: one record key "k", value "v", header h1=x, ts 1700000000000, uncompressed, no producer (75 bytes).
V2_VECTOR = bytes.fromhex(
    "00000000000000000000003f0000000002d21511330000000000000000018bcfe568000000018bcfe56800ffffffffffffffff"
    "ffffffffffff000000011a000000026b0276020468310278"
)
# v2 control batch: COMMIT marker, coordinatorEpoch 5, baseOffset 10, PLE 7, producer 4000/3 (78 bytes).
CONTROL_VECTOR = bytes.fromhex(
    "000000000000000a000000420000000702e909c2600030000000000000018bcfe568000000018bcfe568000000000000000fa0"
    "0003ffffffff000000012000000008000000010c00000000000500"
)
# Legacy messages, key "k", value "v": v1 (ts 1700000000000, CreateTime, CRC 958827571) and v0 (CRC 535615242).
V1_VECTOR = bytes.fromhex("00000000000000000000001839268c3301000000018bcfe56800000000016b0000000176")
V0_VECTOR = bytes.fromhex("0000000000000000000000101fecd70a0000000000016b0000000176")
