/**
 * Saves text as a file through the browser's download (a Blob link, clicked): nothing leaves
 * the page but the file the user asked for.
 */
export function downloadText(
  fileName: string,
  text: string,
  type = 'text/csv;charset=utf-8',
): void {
  // A byte order mark, so that spreadsheet programs read the UTF-8 (°C, m³/h) as UTF-8.
  const blob = new Blob(['\ufeff', text], { type });
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = fileName;
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
  // The download has started from the link; the URL is not needed after this turn.
  setTimeout(() => URL.revokeObjectURL(url), 0);
}

/** A file-name-safe stamp of an instant: `2026-11-27T10-05-00Z`. */
export function fileStamp(epochMs: number): string {
  return new Date(epochMs)
    .toISOString()
    .replace(/\.\d{3}Z$/, 'Z')
    .replace(/:/g, '-');
}
