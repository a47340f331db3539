// Answers of megabytes (a struct-log trace, the proofs of 1,024 storage slots) written to the socket
// a piece per turn of the event loop. Joined into one text, measured and encoded to UTF-8 at once,
// a 4.6 MB trace held the main thread 40-50 ms (make bench, bounds), and every other connection
// waited for it.

/** One request's answer as the parts of its text, with its length in UTF-8 bytes. */
export class PartedAnswer {
  constructor(
    readonly parts: readonly string[],
    readonly byteLength: number,
  ) {}

  /** The whole answer as one text (inside a batch, where answers are joined anyway). */
  text(): string {
    return this.parts.join("");
  }
}

/**
 * Texts of at most about this many characters are joined and written per turn: joining and
 * encoding 256 Ki characters takes well under a millisecond, and a 4.6 MB answer takes 18 turns.
 */
const charsPerTurn = 256 * 1024;

/** The parts `from` onwards, joined up to about charsPerTurn characters (one part at least); `next` is where the rest starts. */
function nextPiece(parts: readonly string[], from: number): { text: string; next: number } {
  let end = from;
  let chars = 0;
  while (end < parts.length && (end === from || chars + parts[end]!.length <= charsPerTurn)) chars += parts[end++]!.length;
  return { text: end === from + 1 ? parts[from]! : parts.slice(from, end).join(""), next: end };
}

/**
 * Writes the answer's text with `write`, a piece per turn of the event loop, then calls `done`;
 * stops without calling it once `abandoned()` (the connection is gone).
 */
export function writeInTurns(answer: PartedAnswer, write: (text: string) => void, done: () => void, abandoned: () => boolean): void {
  let next = 0;
  const writePiece = () => {
    if (abandoned()) return;
    const piece = nextPiece(answer.parts, next);
    next = piece.next;
    write(piece.text);
    if (next < answer.parts.length) setImmediate(writePiece);
    else done();
  };
  writePiece();
}
