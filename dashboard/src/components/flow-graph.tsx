// An automation's flow drawn as boxes from the entry step down, the branches of a condition or a wait-until step side
// by side, with each step's stats (entered, sent, clicked, completed, converted once someone did) on its box.
import { createContext, useContext } from 'react';
import type { Schemas } from '../api/client';
import { flowLayout, STEP_LABEL, stepText, type FlowNode, type Step } from '../pages/automation-model';
import type { SegmentNames } from './audience-sentence';

type StepStats = Schemas['AutomationStats']['steps'][number];

/** The saved segments' names, for a condition's words at any depth of the graph. */
const SegmentNamesContext = createContext<SegmentNames | undefined>(undefined);

function StepBox({ step, stats, entry }: { step: Step; stats: StepStats | undefined; entry: boolean }) {
  const segmentName = useContext(SegmentNamesContext);
  return (
    <div className={`flow-step ${step.type}`} role="group" aria-label={`Step ${step.id}`}>
      <p className="flow-step-head">
        <span className="badge">{STEP_LABEL[step.type]}</span> <strong>{step.id}</strong>
        {entry && <span className="muted"> (entry)</span>}
      </p>
      <p className="flow-step-text">{stepText(step, segmentName)}</p>
      {stats && (
        <dl className="flow-stats" aria-label={`Stats of ${step.id}`}>
          {(['entered', 'sent', 'clicked', 'completed', 'converted'] as const)
            .filter((key) => key === 'entered' || key === 'completed' || (key === 'converted' ? stats.converted > 0 : step.type.startsWith('send_')))
            .map((key) => (
              <div key={key}>
                <dt>{key}</dt>
                <dd>{stats[key]}</dd>
              </div>
            ))}
        </dl>
      )}
    </div>
  );
}

function Chain({ nodes, stats, entryId }: { nodes: FlowNode[]; stats: Map<string, StepStats> | undefined; entryId: string | undefined }) {
  if (nodes.length === 0) return <p className="muted flow-note">continues below</p>;
  return (
    <ol className="flow-chain">
      {nodes.map((node, i) => (
        <li key={i}>
          {node.kind === 'step' ? (
            <StepBox step={node.step} stats={stats?.get(node.step.id)} entry={node.step.id === entryId} />
          ) : node.kind === 'branches' ? (
            <div className="flow-branches">
              <div className="flow-branch" role="group" aria-label={node.labels[0]}>
                <p className="flow-branch-label">{node.labels[0]}</p>
                <Chain nodes={node.yes} stats={stats} entryId={entryId} />
              </div>
              <div className="flow-branch" role="group" aria-label={node.labels[1]}>
                <p className="flow-branch-label">{node.labels[1]}</p>
                <Chain nodes={node.no} stats={stats} entryId={entryId} />
              </div>
            </div>
          ) : node.kind === 'goto' ? (
            <p className={node.missing ? 'flow-note error' : 'flow-note'}>{node.missing ? `→ ${node.id}: no such step` : `→ continues at ${node.id}`}</p>
          ) : (
            <p className="flow-note flow-end">End</p>
          )}
        </li>
      ))}
    </ol>
  );
}

/** `stats`: the per-step stats of the saved automation (absent for a new one). */
export function FlowGraph({ steps, stats, segmentName }: { steps: readonly Step[]; stats?: StepStats[]; segmentName?: SegmentNames }) {
  const { nodes, unreached } = flowLayout(steps);
  const byId = stats && new Map(stats.map((s) => [s.stepId, s]));
  return (
    <SegmentNamesContext value={segmentName}>
    <figure className="flow" aria-label="Flow">
      <figcaption className="visually-hidden">The flow from its entry step{stats ? ', with each step’s stats' : ''}</figcaption>
      <Chain nodes={nodes} stats={byId} entryId={steps[0]?.id} />
      {unreached.length > 0 && (
        <div className="flow-unreached">
          <p className="error">Not reached from the entry step:</p>
          <ul className="flow-chain">
            {unreached.map((step, i) => (
              <li key={i}>
                <StepBox step={step} stats={byId?.get(step.id)} entry={false} />
              </li>
            ))}
          </ul>
        </div>
      )}
    </figure>
    </SegmentNamesContext>
  );
}
