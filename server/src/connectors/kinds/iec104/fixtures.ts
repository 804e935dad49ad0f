/**
 * Published IEC 60870-5-104 frames, byte for byte, that the decoder tests read.
 *
 * Source of every frame below except STARTDT con: the telegrams in `test.py` of the public GitHub
 * repository tritaer/IEC104 (commit 61783315274147999e855fc766e423f693fcbda8), a Python IEC 104
 * telegram decoder whose test feeds it frames captured from real stations. The STARTDT con frame
 * (`68 04 0b 00 00 00`) is from a public Python IEC 104 scanner's constants (STARTDT_CON_FRAME).
 * The expected values were decoded by hand from the standard's formats (IEC 60870-5-101/104).
 */
export const PUBLISHED_FRAMES = {
  sFrame: '68 04 01 00 22 00',
  startdtAct: '68 04 07 00 00 00',
  startdtCon: '68 04 0b 00 00 00',
  singleSq1: '68 0F A6 44 04 02 01 82 14 00 73 00 FB 01 00 00 01',
  singleSq0: '68 12 A8 44 04 02 01 02 14 00 73 00 CC 14 00 01 E4 14 00 00',
  doubleSq0: '68 12 12 44 00 02 03 02 14 00 73 00 5A 02 00 02 EB 03 00 00',
  normalizedSq1: '68 13 14 44 00 02 09 82 14 00 73 00 89 02 00 00 00 00 EF 01 00',
  floatSq1: '68 17 A8 00 04 00 0D 82 01 57 57 00 E7 0B 00 0A D7 A3 BB 00 7F 6A BC 3C 00',
  singleTimed: '68 15 42 EB D2 01 1E 01 03 00 80 00 B0 36 00 01 AF E1 1D 14 70 06 15',
  normalizedTimed: '68 17 BA 8C F2 00 22 01 01 00 03 00 01 00 00 01 00 00 08 7F 0E 09 96 04 15',
  floatTimed: '68 19 FE 08 30 01 24 01 03 51 51 00 EE 03 00 4B E7 47 42 00 91 05 32 0A 69 06 15',
  interrogationAct: '68 0E 00 00 04 00 64 01 06 00 71 00 00 00 00 14',
  interrogationCon: '68 0E 04 00 02 00 64 01 07 71 71 00 00 00 00 14',
} as const;

export const bytes = (hex: string) => Buffer.from(hex.replace(/\s+/g, ''), 'hex');
