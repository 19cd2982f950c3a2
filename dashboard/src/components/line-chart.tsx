// A time series (Chart.js lines on a canvas) with its numbers as a table: the chart for the eye, the table for all.
import { CategoryScale, Chart, Legend, LinearScale, LineController, LineElement, PointElement, Tooltip } from 'chart.js';
import { useEffect, useRef } from 'react';

// Only what line charts use, so the rest of Chart.js stays out of the bundle.
Chart.register(LineController, LineElement, PointElement, CategoryScale, LinearScale, Legend, Tooltip);

export interface Series {
  label: string;
  color: string;
  values: number[];
}

/**
 * `labels` name the points (one per time bucket) and every series has a value per label. The canvas's accessible name
 * carries each series' total (a series of a hundred buckets read aloud helps no one); every value is in the table.
 */
export function LineChart({ title, labels, series }: { title: string; labels: string[]; series: Series[] }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    if (!canvas.current) return;
    const chart = new Chart(canvas.current, {
      type: 'line',
      data: {
        labels,
        datasets: series.map((s) => ({ label: s.label, data: s.values, borderColor: s.color, backgroundColor: s.color, pointRadius: 2 })),
      },
      options: {
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        interaction: { mode: 'index', intersect: false },
        scales: { y: { beginAtZero: true, ticks: { precision: 0 } } },
      },
    });
    return () => chart.destroy();
  }, [labels, series]);
  const total = (values: number[]) => values.reduce((sum, value) => sum + value, 0);
  const summary = series.map((s) => `${s.label} ${total(s.values)}`).join(', ');
  return (
    <figure className="chart">
      <figcaption>{title}</figcaption>
      {labels.length === 0 ? (
        <p className="muted">No data.</p>
      ) : (
        <>
          <div className="chart-canvas" style={{ height: '260px' }}>
            <canvas ref={canvas} role="img" aria-label={`${title}, totals: ${summary}`} />
          </div>
          <details>
            <summary>Numbers</summary>
            <table>
              <thead>
                <tr>
                  <th scope="col">From</th>
                  {series.map((s) => (
                    <th key={s.label} scope="col">
                      {s.label}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {labels.map((label, index) => (
                  <tr key={label}>
                    <th scope="row">{label}</th>
                    {series.map((s) => (
                      <td key={s.label}>{s.values[index]}</td>
                    ))}
                  </tr>
                ))}
              </tbody>
              <tfoot>
                <tr>
                  <th scope="row">Total</th>
                  {series.map((s) => (
                    <td key={s.label}>{total(s.values)}</td>
                  ))}
                </tr>
              </tfoot>
            </table>
          </details>
        </>
      )}
    </figure>
  );
}
