/**
 * Finds where a JSON text stops being valid. Node 20's JSON.parse names no position for most
 * errors, and a user fixing a hand-edited profile needs the line and column.
 */

/** Where and why a JSON text is invalid. */
export interface JsonErrorPosition {
  /** 1-based line. */
  line: number;
  /** 1-based column. */
  column: number;
  /** What was expected there. */
  expected: string;
}

/** Scans `text` as JSON; returns the first error's position, or undefined when it is valid. */
export function findJsonError(text: string): JsonErrorPosition | undefined {
  const scanner = new Scanner(text);
  try {
    scanner.value();
    scanner.space();
    if (scanner.offset < text.length) scanner.fail('end of file after the document');
    return undefined;
  } catch (error) {
    if (!(error instanceof ScanError)) throw error;
    const before = text.slice(0, error.offset);
    return {
      line: before.split('\n').length,
      column: error.offset - before.lastIndexOf('\n'),
      expected: error.expected,
    };
  }
}

class ScanError {
  constructor(
    readonly offset: number,
    readonly expected: string,
  ) {}
}

class Scanner {
  offset = 0;
  // Objects and arrays nest through the call stack; a hostile file must not overflow it.
  private depth = 0;

  constructor(private readonly text: string) {}

  fail(expected: string): never {
    throw new ScanError(this.offset, expected);
  }

  space(): void {
    while (/[ \t\n\r]/.test(this.text[this.offset] ?? '')) this.offset++;
  }

  value(): void {
    this.space();
    const char = this.text[this.offset];
    if (char === '{') this.nested(() => this.object());
    else if (char === '[') this.nested(() => this.array());
    else if (char === '"') this.string();
    else if (char === '-' || (char !== undefined && char >= '0' && char <= '9')) this.number();
    else this.literal(char);
  }

  private literal(char: string | undefined): void {
    for (const word of ['true', 'false', 'null']) {
      if (this.text.startsWith(word, this.offset)) {
        this.offset += word.length;
        return;
      }
    }
    this.fail(char === undefined ? 'a value, found the end of the file' : 'a value');
  }

  private nested(scan: () => void): void {
    if (++this.depth > 512) this.fail('less nesting (at most 512 levels)');
    scan();
    this.depth--;
  }

  private object(): void {
    this.offset++;
    this.space();
    if (this.text[this.offset] === '}') {
      this.offset++;
      return;
    }
    for (;;) {
      this.space();
      if (this.text[this.offset] !== '"') this.fail('a quoted property name');
      this.string();
      this.space();
      this.expect(':', "':' after the property name");
      this.value();
      this.space();
      if (this.text[this.offset] === ',') {
        this.offset++;
        continue;
      }
      this.expect('}', "',' or '}' after the property value");
      return;
    }
  }

  private array(): void {
    this.offset++;
    this.space();
    if (this.text[this.offset] === ']') {
      this.offset++;
      return;
    }
    for (;;) {
      this.value();
      this.space();
      if (this.text[this.offset] === ',') {
        this.offset++;
        continue;
      }
      this.expect(']', "',' or ']' after the array element");
      return;
    }
  }

  private string(): void {
    this.offset++;
    for (;;) {
      const char = this.text[this.offset];
      if (char === undefined) this.fail('a closing quote');
      if (char === '"') {
        this.offset++;
        return;
      }
      if (char < ' ') this.fail('no control character inside a string');
      if (char === '\\') {
        const escaped = this.text[this.offset + 1] ?? '';
        if (escaped === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(this.text.slice(this.offset + 2, this.offset + 6))) {
            this.fail('four hex digits after \\u');
          }
          this.offset += 6;
          continue;
        }
        if (!'"\\/bfnrt'.includes(escaped) || escaped === '') this.fail('a valid escape');
        this.offset += 2;
        continue;
      }
      this.offset++;
    }
  }

  private number(): void {
    const match = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(
      this.text.slice(this.offset, this.offset + 400),
    );
    if (!match) this.fail('a number');
    this.offset += match[0].length;
  }

  private expect(char: string, expected: string): void {
    if (this.text[this.offset] !== char) this.fail(expected);
    this.offset++;
  }
}
