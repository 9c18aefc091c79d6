import { useEffect, useRef } from 'react';
import * as echarts from 'echarts/core';
import { BarChart, LineChart } from 'echarts/charts';
import { GridComponent, LegendComponent, TooltipComponent } from 'echarts/components';
import { CanvasRenderer } from 'echarts/renderers';

// Only what the dashboard draws; this module is loaded with the dashboard, never on first load.
echarts.use([BarChart, LineChart, GridComponent, LegendComponent, TooltipComponent, CanvasRenderer]);

export type ChartOption = echarts.EChartsCoreOption;

/**
 * One ECharts chart in a canvas. Tooltips render in the canvas too (richText): HTML tooltips
 * carry inline styles, which the console's CSP refuses.
 */
export function Chart({ option, label, height = 240 }: { option: ChartOption; label: string; height?: number }) {
  const ref = useRef<HTMLDivElement>(null);
  const chart = useRef<echarts.ECharts | null>(null);
  useEffect(() => {
    if (!ref.current) return;
    const instance = echarts.init(ref.current, undefined, { renderer: 'canvas' });
    chart.current = instance;
    const observer = new ResizeObserver(() => instance.resize());
    observer.observe(ref.current);
    return () => {
      observer.disconnect();
      instance.dispose();
      chart.current = null;
    };
  }, []);
  useEffect(() => {
    chart.current?.setOption(
      {
        animation: false,
        textStyle: { fontFamily: 'Inter, system-ui, sans-serif' },
        tooltip: { trigger: 'axis', renderMode: 'richText' },
        grid: { left: 56, right: 24, top: 32, bottom: 32 },
        ...option,
      },
      true,
    );
  }, [option]);
  return <div className="chart" ref={ref} role="img" aria-label={label} style={{ height }} />;
}
