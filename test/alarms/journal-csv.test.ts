import test from 'ava';
import type { JournalEntry } from '../../src/alarms/alarm-journal.js';
import { journalCsv } from '../../src/alarms/journal-csv.js';

const entry: JournalEntry = {
  seq: 7,
  time: Date.UTC(2026, 0, 1),
  name: 'Hot',
  event: 'Acknowledged',
  from: 'Unacknowledged',
  to: 'Acknowledged',
  active: true,
  acknowledged: true,
  value: -5.5,
  limit: 90,
  account: 'olga',
  comment: 'said "ok", then left\nfor lunch',
  priority: 'High',
  severity: 750,
  area: 'Hall2/Ovens',
  message: '@SUM(A1)',
};

test('RFC 4180 quoting, CRLF lines; numbers as numbers; formulas defused', (t) => {
  const [header, line, end] = journalCsv([entry]).split('\r\n');
  t.is(
    header,
    'seq,time,name,event,from,to,active,acknowledged,value,limit,account,comment,priority,severity,area,message',
  );
  t.is(
    line,
    `7,2026-01-01T00:00:00.000Z,Hot,Acknowledged,Unacknowledged,Acknowledged,true,true,-5.5,90,olga,"said ""ok"", then left\nfor lunch",High,750,Hall2/Ovens,'@SUM(A1)`,
  );
  t.is(end, '');
  t.is(
    journalCsv([{ ...entry, value: '-Bad', comment: undefined }])
      .split('\r\n')[1]
      ?.split(',')[8],
    "'-Bad",
  );
});
