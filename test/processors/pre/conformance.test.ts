import { describe, expect, it } from 'vitest';
import { QUERY_TRANSFORMATION_STRATEGIES, QueryTransformation } from '../../../processors/pre/query-transformation.ts';
import { BUILT_IN_COMPONENTS } from '../../../app/config/built-ins.ts';
import { describePreProcessorConformance } from '../../../testing/pre-processor.ts';
import { ScriptedChat } from '../../helpers/scripted-chat.ts';

for (const strategy of QUERY_TRANSFORMATION_STRATEGIES) {
  describePreProcessorConformance(
    `query-transformation (${strategy})`,
    (respond) => new QueryTransformation({ strategy, chat: new ScriptedChat((call) => respond(call.prompt)) }),
  );
}
describePreProcessorConformance(
  'query-transformation (MULTI_QUERY, includeOriginal)',
  (respond) => new QueryTransformation({ strategy: 'MULTI_QUERY', includeOriginal: true, chat: new ScriptedChat((call) => respond(call.prompt)) }),
);

describe('pre-processor conformance coverage', () => {
  it('runs for every pre-processor the configuration registry knows', () => {
    const registered = BUILT_IN_COMPONENTS.filter((definition) => definition.kind === 'pre-processor').map((definition) => definition.name);
    expect(registered).toEqual(['query-transformation']);
  });
});
