import { App } from 'cdk8s';
import { OWNER_UID_LABEL } from '../../lib/operator/render/labels.js';
import { renderExamplesForSnapshot, renderForSnapshot, STAND_IN_UID, synthForSnapshot } from '../../lib/testing/render-snapshot.js';
import { WEB_SAMPLE, WebOperator } from './fixtures/test-operators.js';

describe('snapshot helpers', () => {
  test('GIVEN a sample CR without uid WHEN rendered for a snapshot THEN the fixed fake uid is used and output matches the snapshot', () => {
    const manifests = renderForSnapshot(new WebOperator(new App()), WEB_SAMPLE);
    expect(manifests.map((m) => m.metadata.ownerReferences![0].uid)).toEqual([STAND_IN_UID, STAND_IN_UID, STAND_IN_UID]);
    expect(manifests.every((m) => m.metadata.labels![OWNER_UID_LABEL] === STAND_IN_UID)).toBe(true);
    expect(manifests).toMatchSnapshot();
  });

  test('GIVEN an operator WHEN its examples are rendered THEN they are keyed by namespace/name', () => {
    expect(Object.keys(renderExamplesForSnapshot(new WebOperator(new App())))).toEqual(['team-a/shop']);
  });

  test('GIVEN an operator WHEN synthesized for a snapshot THEN the install manifests match the snapshot', () => {
    expect(synthForSnapshot(new WebOperator(new App()))).toMatchSnapshot();
  });
});
