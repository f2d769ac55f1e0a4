import assert from "node:assert/strict";
import { test } from "node:test";
import { cutMiddle, inputLabel } from "../src/contract/names.js";
import { shortTarget } from "../src/contract/graphmodel.js";

test("Dynamo's mangled attribute inputs read as dotted paths; other names stay", () => {
  assert.equal(inputLabel("l_self_modules_transformer_modules_h_modules_0_modules_ln_1_parameters_weight_"), "self.transformer.h.0.ln_1.weight");
  assert.equal(inputLabel("l_self_buffers_running_mean_"), "self.running_mean");
  assert.equal(inputLabel("L_x_"), "L_x_");
  assert.equal(inputLabel("primals_3"), "primals_3");
  assert.equal(shortTarget("placeholder", "x", "l_self_modules_lin_parameters_bias_"), "self.lin.bias");
});

test("labels cut in the middle keep the tail that tells siblings apart", () => {
  const names = ["ln_1", "attn.c_attn", "attn.c_proj", "mlp.c_fc"].flatMap((m) => [0, 1, 12].flatMap((i) =>
    ["weight", "bias"].map((p) => inputLabel(`l_self_modules_transformer_modules_h_modules_${i}_modules_${m.replace(".", "_modules_")}_parameters_${p}_`))));
  // 32 characters: what a node box of the widest size (230 px) shows
  const cut = names.map((s) => cutMiddle(s, 32));
  assert.ok(cut.every((s) => s.length <= 32), cut.join(" "));
  assert.equal(new Set(cut).size, names.length, cut.join(" "));
  // narrower: a block's weight and bias still differ
  for (let k = 0; k < names.length; k += 2) assert.notEqual(cutMiddle(names[k], 14), cutMiddle(names[k + 1], 14));
  assert.equal(cutMiddle("short", 10), "short");
  assert.equal(cutMiddle("abcdefghijklmnopqrstuvwxyz", 10), "abcd…vwxyz");
});
