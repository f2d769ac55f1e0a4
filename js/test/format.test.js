import assert from "node:assert/strict";
import { test } from "node:test";
import { shortPath, where } from "../src/ui/format.js";

test("a notebook cell is written as IPython writes it", () => {
  assert.equal(where("Cell In[3]", 4), "Cell In[3], line 4");
  assert.equal(where("Cell In[12]", null), "Cell In[12], line ?");
});

test("a file is written as dir/file:line", () => {
  assert.equal(where("/home/me/project/model.py", 7), "project/model.py:7");
  assert.equal(where("Cell In[3]x", 1), "Cell In[3]x:1");
  assert.equal(where("", 2), "?:2");
  assert.equal(shortPath("Cell In[3]"), "Cell In[3]");
});
