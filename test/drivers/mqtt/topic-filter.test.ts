import test from 'ava';
import {
  fillTagTemplate,
  matchTopic,
  parseTagTemplate,
  parseTopicFilter,
  tagTemplateProblem,
  topicFilterProblem,
  topicNameProblem,
} from '../../../drivers/mqtt/topic-filter.js';

test('topic filters: wildcards are whole levels, # only last; shared subscriptions refused', (t) => {
  for (const ok of ['a', 'a/b', '+', '#', 'a/+/c', 'a/#', '+/+/#', '/a', 'a//b'])
    t.is(topicFilterProblem(ok), undefined, ok);
  t.regex(topicFilterProblem('a/#/b') ?? '', /last/);
  t.regex(topicFilterProblem('a#') ?? '', /whole level/);
  t.regex(topicFilterProblem('a/b+') ?? '', /\+ must be a whole level/);
  t.regex(topicFilterProblem('') ?? '', /empty/);
  t.regex(topicFilterProblem('a\u0000') ?? '', /NUL/);
  t.regex(topicFilterProblem('$share/g/a') ?? '', /shared/);
  t.regex(topicNameProblem('a/+') ?? '', /wildcards/);
  t.is(topicNameProblem('a/b'), undefined);
});

test('matching captures each + level and the rest of the topic for #', (t) => {
  const filter = parseTopicFilter('plant/+/+/#');
  t.is(filter.wildcards, 3);
  t.deepEqual(matchTopic(filter, 'plant/L1/oven/zone/temp'), ['L1', 'oven', 'zone/temp']);
  t.deepEqual(matchTopic(filter, 'plant/L1/oven'), ['L1', 'oven', ''], '# matches no level too');
  t.is(matchTopic(filter, 'plant/L1'), undefined);
  t.is(matchTopic(filter, 'other/L1/oven/x'), undefined);
  const exact = parseTopicFilter('a/b');
  t.deepEqual(matchTopic(exact, 'a/b'), []);
  t.is(matchTopic(exact, 'a/b/c'), undefined);
  t.is(matchTopic(exact, 'a'), undefined);
  t.is(matchTopic(parseTopicFilter('+/x'), '$SYS/x'), undefined, 'no $ topics under a wildcard');
  t.is(matchTopic(parseTopicFilter('#'), '$SYS/x'), undefined);
  t.deepEqual(matchTopic(parseTopicFilter('$SYS/+'), '$SYS/x'), ['x']);
});

test('templates: {n} names the n-th wildcard; every wildcard must be used', (t) => {
  t.deepEqual(parseTagTemplate('Line1/{1}/T{2}x'), ['Line1/', 0, '/T', 1, 'x']);
  t.is(fillTagTemplate(parseTagTemplate('Line1/{2}/{1}'), ['a', 'b/c']), 'Line1/b/c/a');
  t.is(tagTemplateProblem('Line1/{1}/{2}', 2), undefined);
  t.regex(tagTemplateProblem('Line1/{1}', 2) ?? '', /wildcard 2 .* not used/);
  t.regex(tagTemplateProblem('Line1/{3}', 2) ?? '', /beyond the 2 wildcard/);
  t.regex(tagTemplateProblem('A/{1}', 0) ?? '', /needs a wildcard/);
  t.regex(tagTemplateProblem('A/{x}', 0) ?? '', /braces/);
  t.is(tagTemplateProblem('A/B', 0), undefined);
});
