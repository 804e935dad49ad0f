import { describe, expect, it } from 'vitest';
import { UnsavedChanges, type UnloadEvent } from './unsaved-changes';

function guard(answer: boolean) {
  const questions: number[] = [];
  const changes = new UnsavedChanges(() => {
    questions.push(1);
    return answer;
  });
  return { changes, asked: () => questions.length };
}

function unload(): UnloadEvent & { prevented: boolean } {
  const event = {
    prevented: false,
    returnValue: undefined as unknown,
    preventDefault() {
      event.prevented = true;
    },
  };
  return event;
}

describe('unsaved changes', () => {
  it('lets the user leave without a question while no editor holds changes', () => {
    const { changes, asked } = guard(false);
    changes.track(() => false);
    expect(changes.mayLeave('/dashboards/1', '/devices')).toBe(true);
    expect(asked()).toBe(0);
  });

  it('asks while an editor holds changes, and the answer decides', () => {
    const stay = guard(false);
    stay.changes.track(() => true);
    expect(stay.changes.mayLeave('/dashboards/1', '/devices')).toBe(false);
    expect(stay.asked()).toBe(1);

    const leave = guard(true);
    leave.changes.track(() => false);
    leave.changes.track(() => true);
    expect(leave.changes.mayLeave('/dashboards/1', '/')).toBe(true);
    expect(leave.asked()).toBe(1);
  });

  it('does not ask for a change of the query on the same page', () => {
    const { changes, asked } = guard(false);
    changes.track(() => true);
    expect(changes.mayLeave('/map', '/map')).toBe(true);
    expect(asked()).toBe(0);
  });

  it('forgets an editor once it is torn down, and reads its state at the moment of leaving', () => {
    const { changes, asked } = guard(false);
    let dirty = false;
    const untrack = changes.track(() => dirty);
    expect(changes.pending).toBe(false);
    dirty = true;
    expect(changes.pending).toBe(true);
    untrack();
    expect(changes.mayLeave('/rules/1', '/rules')).toBe(true);
    expect(asked()).toBe(0);
  });

  it('holds the window open on unload only while something is unsaved', () => {
    const { changes } = guard(true);
    let dirty = false;
    changes.track(() => dirty);
    const clean = unload();
    changes.onBeforeUnload(clean);
    expect(clean.prevented).toBe(false);
    dirty = true;
    const held = unload();
    changes.onBeforeUnload(held);
    expect(held.prevented).toBe(true);
    expect(held.returnValue).toBe('');
  });
});
