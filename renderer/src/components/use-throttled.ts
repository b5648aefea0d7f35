/**
 * A value that follows another at most once per interval (the last change always arrives), so a
 * view that fetches again when scores land asks at most a few times a second, however fast they land.
 * Runs on: renderer.
 */
import { useEffect, useRef, useState } from 'react';

export function useThrottled<T>(value: T, ms: number): T {
  const [shown, setShown] = useState(value);
  const last = useRef(0);
  useEffect(() => {
    if (Object.is(value, shown)) return;
    const wait = last.current + ms - Date.now();
    const timer = setTimeout(() => {
      last.current = Date.now();
      setShown(value);
    }, Math.max(0, wait));
    return () => clearTimeout(timer);
  }, [value, shown, ms]);
  return shown;
}
