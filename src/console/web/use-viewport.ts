import { useEffect, useRef, useState } from 'preact/hooks';

/**
 * A scrolling element of a virtual list: its ref, how far it is scrolled (px, set from its
 * `onScroll`) and its height (px, kept by a ResizeObserver; 600 until it is measured).
 */
export function useViewport() {
  const viewport = useRef<HTMLDivElement>(null);
  const [scrollTop, setScrollTop] = useState(0);
  const [height, setHeight] = useState(600);

  useEffect(() => {
    const element = viewport.current;
    if (!element) return;
    const observer = new ResizeObserver(() => setHeight(element.clientHeight));
    observer.observe(element);
    setHeight(element.clientHeight);
    return () => observer.disconnect();
  }, []);

  return { viewport, scrollTop, setScrollTop, height };
}
