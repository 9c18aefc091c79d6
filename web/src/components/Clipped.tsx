import { Link } from 'react-router';

/**
 * User text (a name, an id) kept within its box: cut with an ellipsis, the whole text in its
 * title (shown on hover) and in the page (find, copy, screen readers), so an unbroken
 * 900-character name never widens the page. One line by default (breadcrumbs, text in a
 * sentence); `inCell` lets it wrap onto three lines as table cells do.
 */
interface ClippedProps {
  text: string;
  inCell?: boolean;
}

const classOf = (inCell?: boolean) => (inCell ? 'clip-cell' : 'clip');

export function Clipped({ text, inCell }: ClippedProps) {
  return (
    <span className={classOf(inCell)} title={text}>
      {text}
    </span>
  );
}

/** A link whose text is user text, clipped as `Clipped` is. */
export function ClippedLink({ to, text, inCell }: ClippedProps & { to: string }) {
  return (
    <Link className={classOf(inCell)} to={to} title={text}>
      {text}
    </Link>
  );
}

/**
 * A title that is user text (a trace, session, user or prompt name): wrapped anywhere and cut
 * after three lines with an ellipsis, the whole text in its title and in the page.
 */
export function Clamped({ text }: { text: string }) {
  return (
    <span className="clamp" title={text}>
      {text}
    </span>
  );
}
