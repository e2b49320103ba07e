import { brandClass, hasBrand } from '../../lib/operator/brand.js';
import { CustomResourceValidationError, OperatorError, TerminalError } from '../../lib/operator/errors.js';

/** Another copy of the SDK's classes: same brand names, different class objects (as a second install loads them). */
function secondCopy() {
  class OtherTerminalError extends Error {
    static {
      brandClass(this, 'TerminalError');
    }
  }
  class OtherOperatorError extends Error {
    static {
      brandClass(this, 'OperatorError');
    }
  }
  class OtherValidationError extends OtherOperatorError {
    static {
      brandClass(this, 'CustomResourceValidationError');
    }
  }
  return { OtherTerminalError, OtherValidationError };
}

describe('brandClass', () => {
  test('GIVEN errors made by another copy WHEN checked with instanceof THEN this copy recognises them', () => {
    const { OtherTerminalError, OtherValidationError } = secondCopy();
    expect(new OtherTerminalError('x')).toBeInstanceOf(TerminalError);
    expect(new OtherValidationError('x')).toBeInstanceOf(CustomResourceValidationError);
    expect(new OtherValidationError('x')).toBeInstanceOf(OperatorError);
    expect(new OtherTerminalError('x')).not.toBeInstanceOf(OperatorError);
    expect(new TerminalError('x')).toBeInstanceOf(OtherTerminalError);
  });

  test('GIVEN a user subclass WHEN checked with instanceof THEN it keeps plain prototype semantics', () => {
    class RetryLater extends TerminalError {}
    expect(new RetryLater('x')).toBeInstanceOf(TerminalError);
    expect(new TerminalError('x')).not.toBeInstanceOf(RetryLater);
    expect(hasBrand(new RetryLater('x'), 'TerminalError')).toBe(true);
  });

  test('GIVEN non-objects WHEN checked THEN no brand and no throw', () => {
    for (const value of [null, undefined, 1, 'TerminalError', Symbol('x')]) {
      expect(hasBrand(value, 'TerminalError')).toBe(false);
      expect((value as unknown) instanceof TerminalError).toBe(false);
    }
  });
});
