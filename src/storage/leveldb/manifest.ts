// LevelDB's MANIFEST: a log (logFormat.ts) of version edits, each a list of tagged fields. Played
// in order they give the files the database is made of: its table files by level and number, with
// their sizes, and the number of the log whose writes no table holds yet (with that of the log
// before it while a compaction of it was under way).
import { readLengthPrefixed, readVarint } from "./varint.js";

const comparatorTag = 1;
const logNumberTag = 2;
const nextFileNumberTag = 3;
const lastSequenceTag = 4;
const compactPointerTag = 5;
const deletedFileTag = 6;
const newFileTag = 7;
const previousLogNumberTag = 9;

export interface LevelManifest {
  readonly logNumber: number;
  readonly previousLogNumber: number;
  /** The live table files: number -> bytes. */
  readonly tables: Map<number, number>;
}

/** The files the manifest's edits add up to, or what in them does not parse. */
export function playManifest(edits: readonly Uint8Array[]): LevelManifest | string {
  let logNumber = 0;
  let previousLogNumber = 0;
  /** "level:number" -> [number, bytes]: a file moves between levels as a deletion and an addition. */
  const files = new Map<string, [number, number]>();
  for (const [index, edit] of edits.entries()) {
    const fail = `version edit ${index} of the manifest does not parse`;
    let at = 0;
    const varint = (): number => {
      const read = readVarint(edit, at);
      if (read === undefined) throw new Error(fail);
      at = read.next;
      return read.value;
    };
    const slice = (): void => {
      const read = readLengthPrefixed(edit, at);
      if (read === undefined) throw new Error(fail);
      at = read.next;
    };
    try {
      while (at < edit.length) {
        const tag = varint();
        if (tag === comparatorTag) slice();
        else if (tag === logNumberTag) logNumber = varint();
        else if (tag === previousLogNumberTag) previousLogNumber = varint();
        else if (tag === nextFileNumberTag || tag === lastSequenceTag) varint();
        else if (tag === compactPointerTag) [varint(), slice()];
        else if (tag === deletedFileTag) files.delete(`${varint()}:${varint()}`);
        else if (tag === newFileTag) {
          const level = varint();
          const number = varint();
          files.set(`${level}:${number}`, [number, varint()]);
          slice();
          slice();
        } else throw new Error(`${fail}: unknown tag ${tag}`);
      }
    } catch (error) {
      return (error as Error).message;
    }
  }
  return { logNumber, previousLogNumber, tables: new Map(files.values()) };
}
