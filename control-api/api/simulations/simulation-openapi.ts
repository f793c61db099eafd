import { z } from 'zod';
import { clientIdParam, type OpenApiBuilder } from '../route-kit/openapi/builder.js';
import { errorResponses, jsonBody, noContent, ok, operation, pathParam } from '../route-kit/openapi/operations.js';
import { callerTurnSchema } from '../../features/recipes/simulator/scenario-schema.js';
import { simulationStartSchema } from './simulation-routes.js';

/** What `SimulationSessions` answers (SessionView / SessionDetail), as the OpenAPI response schemas. */
const endReason = z.enum(['closed', 'transferred', 'callerHangup', 'exitNotConnected', 'error', 'stepLimit']);

export const simulationViewSchema = z.object({
  id: z.uuid(),
  status: z.enum(['awaitingInput', 'ended']),
  agent: z.array(z.string()).describe('What the agent said since the previous request'),
  end: z
    .object({ reason: endReason, disposition: z.string().optional(), transferTarget: z.string().optional(), lastBlockId: z.string().optional(), lastExit: z.string().optional() })
    .optional()
    .describe('Present once the simulated call has ended'),
  variables: z.record(z.string(), z.unknown()),
  path: z.array(z.string()).describe('Block ids visited, in order'),
  warnings: z.array(z.string()),
});

export const simulationDetailSchema = simulationViewSchema.extend({
  transcript: z.array(
    z.object({
      at: z.number().describe('Epoch milliseconds'),
      speaker: z.enum(['agent', 'caller']),
      text: z.string(),
      blockId: z.string(),
      dtmf: z.boolean().optional(),
      interrupted: z.boolean().optional(),
      unspoken: z.string().optional(),
    }),
  ),
});

/** The simulation routes' part of `/v1/openapi.json`. */
export function simulationOpenApi(b: OpenApiBuilder): void {
  const start = b.addZod('SimulationStart', simulationStartSchema, 'input');
  const turn = b.addZod('SimulationTurn', callerTurnSchema, 'input');
  const view = b.addZod('Simulation', simulationViewSchema, 'output');
  const detail = b.addZod('SimulationDetail', simulationDetailSchema, 'output');
  const collection = '/v1/tenants/{clientId}/simulations';
  const item = `${collection}/{id}`;
  const id = pathParam('id', 'simulation id');
  const tag = 'Simulation';
  b.tag(tag, 'Text simulations of a recipe, turn by turn (the dashboard\'s test panel); webhooks are recorded, never sent.');
  b.path(collection, 'post', operation({
    operationId: 'startSimulation', summary: 'Start a text simulation of a stored recipe (`recipe`) or an unsaved one (`document`)', tag,
    parameters: [clientIdParam], requestBody: jsonBody(start),
    responses: { '201': ok('The session, with what the agent said up to its first question', view), ...errorResponses(400, 401, 404, 413, 415, 429) },
  }));
  b.path(`${item}/turns`, 'post', operation({
    operationId: 'simulationTurn', summary: 'Send the caller\'s next turn: text, {say}, {dtmf}, {silence} or {hangup}', tag,
    parameters: [clientIdParam, id], requestBody: jsonBody(turn),
    responses: { '200': ok('What the agent said in reply', view), ...errorResponses(400, 401, 404, 409, 412, 413, 415) },
  }));
  b.path(item, 'get', operation({
    operationId: 'getSimulation', summary: 'The session with its full transcript', tag, parameters: [clientIdParam, id],
    responses: { '200': ok('The session', detail), ...errorResponses(401, 404) },
  }));
  b.path(item, 'delete', operation({
    operationId: 'endSimulation', summary: 'End the simulated call and forget it', tag, parameters: [clientIdParam, id],
    responses: { '204': noContent('Ended'), ...errorResponses(401, 404) },
  }));
}
