import assert from 'node:assert/strict';
import { protoTargets, staleFiles, withJsExtensions } from '../../proto/generate.js';

describe('code generated from proto/*.proto', function () {
  this.timeout(60_000);

  for (const target of protoTargets) {
    it(`${target.out} is what protoc and protobuf-ts generate now (else run: npm run proto)`, () => {
      assert.deepEqual(staleFiles(target), [], 'generated protobuf code is not current: run `npm run proto` and commit the result');
    });
  }

  it('gives relative imports the .js extension NodeNext needs, and leaves package imports alone', () => {
    const source = 'import { Struct } from "./google/protobuf/struct";\nimport { A } from "../a.js";\nimport { MessageType } from "@protobuf-ts/runtime";\n';
    assert.equal(
      withJsExtensions(source),
      'import { Struct } from "./google/protobuf/struct.js";\nimport { A } from "../a.js";\nimport { MessageType } from "@protobuf-ts/runtime";\n',
    );
  });
});
