// nexttask.js — one helper shared by the loading steps and the sliced work.
// Owns: yielding to the event loop. Must not: do any work of its own.

/** Gives the event loop a turn (a new task: input and painting may run in between). */
export const nextTask = () => new Promise((resolve) => setTimeout(resolve, 0));
