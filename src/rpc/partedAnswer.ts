// Answers of megabytes (a struct-log trace, the proofs of 1,024 storage slots) written to the socket
// a piece per turn of the event loop. Joined into one text, measured and encoded to UTF-8 at once,
// a 4.6 MB trace held the main thread 40-50 ms (make bench, bounds), and every other connection
// waited for it. A trace of a gigabyte could not be one text at all (V8 stops at about 512 MiB):
// its parts are bytes, written as the client reads them and let go once written, so the node
// holds the answer once, not once more in the socket's buffers.

/** One request's answer as the parts of its text (texts, or bytes of ASCII text), with its length in UTF-8 bytes. */
export class PartedAnswer {
  private readonly pieces: (string | Uint8Array | undefined)[];

  constructor(
    parts: readonly (string | Uint8Array)[],
    readonly byteLength: number,
    /** Not held to the response limit (see EncodedJson): such an answer is never joined into one text. */
    readonly unbounded = false,
  ) {
    this.pieces = [...parts];
  }

  /** The whole answer as one text (inside a batch, where answers are joined anyway, and over WebSocket). */
  text(): string {
    return this.pieces.map((part) => (part === undefined || typeof part === "string" ? (part ?? "") : Buffer.from(part.buffer, part.byteOffset, part.byteLength).toString("latin1"))).join("");
  }

  get partCount(): number {
    return this.pieces.length;
  }

  /**
   * The parts `from` onwards, texts joined up to about charsPerTurn characters, a part in bytes
   * alone; `next` is where the rest starts. The parts handed out are let go.
   */
  take(from: number): { piece: string | Uint8Array; next: number } {
    const pieces = this.pieces;
    const first = pieces[from]!;
    pieces[from] = undefined;
    if (typeof first !== "string") return { piece: first, next: from + 1 };
    let end = from + 1;
    let chars = first.length;
    while (end < pieces.length && typeof pieces[end] === "string" && chars + (pieces[end] as string).length <= charsPerTurn) chars += (pieces[end++] as string).length;
    if (end === from + 1) return { piece: first, next: end };
    const texts = [first];
    for (let index = from + 1; index < end; index++) {
      texts.push(pieces[index] as string);
      pieces[index] = undefined;
    }
    return { piece: texts.join(""), next: end };
  }
}

/**
 * Texts of at most about this many characters are joined and written per turn: joining and
 * encoding 256 Ki characters takes well under a millisecond, and a 4.6 MB answer takes 18 turns.
 */
const charsPerTurn = 256 * 1024;

/** Where an answer goes: a socket, or node:http's response. */
export interface AnswerSink {
  /** Writes a piece; false when the sink's buffer is full (wait for onDrain before the next). */
  write(piece: string | Uint8Array): boolean;
  /** Calls `resume` once, when the buffer has drained or the connection is gone. */
  onDrain(resume: () => void): void;
}

/**
 * Writes the answer's parts into `sink`, a piece per turn of the event loop, and after a piece
 * that filled the sink's buffer only once it drained; then calls `done`. Stops without calling it
 * once `abandoned()` (the connection is gone). Written parts are let go: the answer is written once.
 */
export function writeInTurns(answer: PartedAnswer, sink: AnswerSink, done: () => void, abandoned: () => boolean): void {
  let next = 0;
  const writePiece = () => {
    if (abandoned()) return;
    const taken = answer.take(next);
    next = taken.next;
    const room = sink.write(taken.piece);
    if (next >= answer.partCount) done();
    else if (room) setImmediate(writePiece);
    else sink.onDrain(writePiece);
  };
  writePiece();
}

/** Calls `resume` once, at the stream's next 'drain' or 'close', whichever comes first. */
export function drainedOrClosed(stream: { once(event: "drain" | "close", listener: () => void): unknown; off(event: "drain" | "close", listener: () => void): unknown }, resume: () => void): void {
  const settle = () => {
    stream.off("drain", settle);
    stream.off("close", settle);
    resume();
  };
  stream.once("drain", settle);
  stream.once("close", settle);
}
