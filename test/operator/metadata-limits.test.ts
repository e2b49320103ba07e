import { annotationsSizeProblem, labelValueProblem, metadataProblems, qualifiedNameProblem } from '../../lib/operator/schema/metadata-limits.js';

describe('metadata limits', () => {
  test('GIVEN label values THEN at most 63 of [A-Za-z0-9._-], alphanumeric at both ends, empty allowed', () => {
    expect(labelValueProblem('')).toBeUndefined();
    expect(labelValueProblem('a'.repeat(63))).toBeUndefined();
    expect(labelValueProblem('a'.repeat(64))).toMatch(/no more than 63/);
    expect(labelValueProblem('-a')).toMatch(/start and end with an alphanumeric/);
    expect(labelValueProblem('é')).toMatch(/alphanumeric/);
  });

  test('GIVEN keys THEN an optional DNS-subdomain prefix and a name of at most 63', () => {
    expect(qualifiedNameProblem('app.kubernetes.io/name')).toBeUndefined();
    expect(qualifiedNameProblem('a/b/c')).toMatch(/at most one/);
    expect(qualifiedNameProblem('/x')).toMatch(/prefix part must be non-empty/);
    expect(qualifiedNameProblem('x'.repeat(64))).toMatch(/no more than 63/);
  });

  test('GIVEN annotations THEN their keys\' and values\' UTF-8 bytes add up to at most 256 KiB (minus what is reserved)', () => {
    expect(annotationsSizeProblem({ k: 'é'.repeat(131_071) })).toBeUndefined(); // 1 + 262142 bytes
    expect(annotationsSizeProblem({ k: 'é'.repeat(128 * 1024) })).toMatch(/262144 bytes in total \(got 262145\)/);
    expect(annotationsSizeProblem({ k: 'x'.repeat(256 * 1024 - 1) }, 128)).toMatch(/262016/);
  });

  test('GIVEN bad labels and annotations THEN each problem names its field', () => {
    expect(metadataProblems({ labels: { 'a b': 'x', ok: 'no way' }, annotations: { '-bad': 'v' } })).toEqual([
      'metadata.labels: key "a b": name part must consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an alphanumeric character',
      'metadata.labels["ok"]: value "no way": a valid label must be an empty string or consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an alphanumeric character',
      'metadata.annotations: key "-bad": name part must consist of alphanumeric characters, \'-\', \'_\' or \'.\', and must start and end with an alphanumeric character',
    ]);
  });
});
