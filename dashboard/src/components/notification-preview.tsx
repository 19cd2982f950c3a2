// How a push notification looks on a desktop: icon, title, body, image and action buttons (the builder will reuse it).
import type { Schemas } from '../api/client';

type Content = Schemas['Campaign']['content'];

export function NotificationPreview({ content, origin }: { content: Content; origin: string }) {
  return (
    <figure className="notification" aria-label="Notification preview">
      <div className="notification-head">
        {content.iconUrl ? <img src={content.iconUrl} alt="" width={40} height={40} /> : <span className="notification-icon" aria-hidden="true" />}
        <div>
          <strong>{content.title}</strong>
          <span className="muted notification-origin">{origin}</span>
          <p>{content.body}</p>
        </div>
      </div>
      {content.imageUrl && <img className="notification-image" src={content.imageUrl} alt="" />}
      {content.actions && content.actions.length > 0 && (
        <div className="notification-actions">
          {content.actions.map((action) => (
            <span key={action.action}>{action.title}</span>
          ))}
        </div>
      )}
      <figcaption className="visually-hidden">
        Preview: {content.title}. {content.body}
      </figcaption>
    </figure>
  );
}
