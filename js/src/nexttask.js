// nexttask.js — one helper shared by the loading steps and the sliced work.
// Owns: yielding to the event loop. Must not: do any work of its own.

const channel = typeof MessageChannel === "function" ? new MessageChannel() : null;
const waiting = [];
// Node (the JS tests) keeps a process alive while a port is referenced: only while a turn is awaited
const hold = (on) => { const port = channel.port1; if (typeof port.ref === "function") (on ? port.ref() : port.unref()); };
if (channel) {
  channel.port1.onmessage = () => {
    const resolve = waiting.shift();
    if (!waiting.length) hold(false);
    if (resolve) resolve();
  };
  hold(false);
}

/** Gives the event loop a turn (a new task: input and painting may run in between).
 * A message task, not `setTimeout(0)`: browsers hold nested timeouts back 4 ms each, which a
 * sliced load of 10,000 nodes paid a dozen times. */
export const nextTask = () => new Promise((resolve) => {
  if (!channel) { setTimeout(resolve, 0); return; }
  waiting.push(resolve);
  hold(true);
  channel.port2.postMessage(0);
});
