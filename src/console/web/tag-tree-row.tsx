import type { Sample } from './api-types';
import { formatValue } from './format';
import { QualityBadge } from './quality-badge';
import type { TreeRow } from './tag-tree';
import { valueMeaning } from './value-meaning';

/** Props of {@link TagTreeRow}. */
export interface TagTreeRowProps {
  row: TreeRow;
  index: number;
  sample: Sample | undefined;
  selected: boolean;
  /** Opens or closes a folder, or selects a tag. */
  onActivate(index: number): void;
}

/** One row of the tag tree: a folder with its tag count, or a tag with value and quality. */
export function TagTreeRow({ row, index, sample, selected, onActivate }: TagTreeRowProps) {
  const indent = { paddingLeft: `${0.5 + row.depth * 1.1}rem` };
  if (row.kind === 'folder') {
    return (
      <button
        type="button"
        class="tree-row tree-folder"
        style={indent}
        aria-expanded={row.open}
        onClick={() => onActivate(index)}
      >
        <span aria-hidden="true" class="twisty">
          {row.open ? '▾' : '▸'}
        </span>
        <span class="tree-name">{row.node.name}</span>
        <span class="tree-count">{row.node.tagCount}</span>
      </button>
    );
  }
  const unit = sample?.metadata?.unit;
  const meaning = valueMeaning(row.node.path, sample?.value);
  return (
    <button
      type="button"
      class={`tree-row tree-tag${selected ? ' selected' : ''}`}
      style={indent}
      aria-pressed={selected}
      data-path={row.node.path}
      onClick={() => onActivate(index)}
    >
      <span class="tree-name">{row.node.name}</span>
      <span class={`tree-value${meaning ? ` meaning-${meaning}` : ''}`}>
        {formatValue(sample)}
        {unit && sample?.value !== undefined ? ` ${unit}` : ''}
      </span>
      {sample ? <QualityBadge quality={sample.quality} /> : null}
    </button>
  );
}
