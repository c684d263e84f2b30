// boot.js loads the console. A browser on a node drops every request when
// the machine's network interfaces change (each pod start or stop), and a
// module that failed to load stays failed for the page's life; so a failed
// load reloads the page, a few times in a row at most, before it gives up
// and says why.
const key = 'orca.bootRetries';
import('./app.js').then(
  () => sessionStorage.removeItem(key),
  (err) => {
    const n = Number(sessionStorage.getItem(key) || 0);
    if (n < 3) {
      sessionStorage.setItem(key, String(n + 1));
      setTimeout(() => location.reload(), 300 * (n + 1));
      return;
    }
    sessionStorage.removeItem(key);
    const p = document.createElement('p');
    p.setAttribute('role', 'alert');
    p.textContent = `The console could not be loaded: ${err.message}. Reload the page to try again.`;
    document.body.prepend(p);
  },
);
