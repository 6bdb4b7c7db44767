import { describe, expect, it } from 'vitest';
import { xmlProblem } from './xml-well-formed.js';

describe('the well-formedness check used on the SVGs', () => {
  it('accepts a well-formed document', () => {
    expect(xmlProblem('<svg xmlns="http://www.w3.org/2000/svg" width="1"><g a=\'x\'><text>a &amp; b &#60;</text><rect/></g><!-- c --></svg>')).toBeUndefined();
  });

  it('finds each kind of defect', () => {
    expect(xmlProblem('<svg><text>a < b</text></svg>')).toMatch(/without a name/);
    expect(xmlProblem('<svg><text t="a < b">x</text></svg>')).toMatch(/raw </);
    expect(xmlProblem('<svg><text>a & b</text></svg>')).toMatch(/raw &/);
    expect(xmlProblem('<svg><text a="x" a="y"></text></svg>')).toMatch(/twice/);
    expect(xmlProblem('<svg><g></svg>')).toMatch(/does not close/);
    expect(xmlProblem('<svg><g>')).toMatch(/never closed/);
    expect(xmlProblem('<svg/><svg/>')).toMatch(/more than one root/);
    expect(xmlProblem('<svg><text t="a"b">x</text></svg>')).toBeDefined();
    expect(xmlProblem('<svg><text>\u0001</text></svg>')).toMatch(/forbids/);
    expect(xmlProblem('<svg><text x=1>x</text></svg>')).toMatch(/quoted/);
    expect(xmlProblem('')).toMatch(/no root/);
  });
});
