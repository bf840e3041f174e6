/*
 * vros guest booking engine (docs/booking-engine.md, "The widget").
 *
 * Plain JavaScript, no build step, no dependency: edge serves this one file as
 * /widget/vros-booking.js, /widget/general-olb.js, /widget/bcalendar.js and
 * /widget/bcalendar-more.js. It renders a booking form into the element that holds its
 * <script> tag (or data-target) and talks to the public booking API of the origin it was
 * loaded from. Everything that comes from the API is put into the page as text
 * (textContent, never as markup). Stripe.js is loaded from js.stripe.com only when a live
 * account's checkout asks for it.
 */
(() => {
  "use strict";

  const SCRIPT_NAMES = /\/widget\/(vros-booking|general-olb|bcalendar|bcalendar-more|engine)\.js(?:[?#]|$)/;
  const STRIPE_JS = "https://js.stripe.com/v3/";

  // ---------------------------------------------------------------- strings

  // Each language's strings. A value is a string with {placeholders}, or a {one, other}
  // pair chosen by Intl.PluralRules with {n}.
  const STRINGS = {
    en: {
      loading: "Loading…",
      notSetUp: "This booking form is not set up: it has no account key.",
      refused: "Online booking is not available on this website right now: the booking service refused this site or could not be reached.",
      retry: "Try again",
      noProperties: "No property can be booked on this website.",
      unknownProperty: "This property cannot be booked on this website.",
      chooseProperty: "Choose a property",
      guestsMax: { one: "Up to {n} guest", other: "Up to {n} guests" },
      bedrooms: { one: "{n} bedroom", other: "{n} bedrooms" },
      changeProperty: "Change property",
      dates: "Dates",
      prevMonth: "Previous month",
      nextMonth: "Next month",
      pickArrival: "Select your arrival date.",
      pickDeparture: "Arrival {date}. Now select your departure date.",
      minStay: { one: "Minimum stay: {n} night.", other: "Minimum stay: {n} nights." },
      nights: { one: "{n} night", other: "{n} nights" },
      clearDates: "Clear dates",
      dayUnavailable: "unavailable",
      dayNoArrival: "no arrival on this day",
      dayNoDeparture: "no departure on this day",
      dayArrival: "your arrival",
      dayDeparture: "your departure",
      dayInStay: "in your stay",
      cannotArrive: "A stay cannot start on {date}.",
      tooShort: { one: "From {date} the minimum stay is {n} night.", other: "From {date} the minimum stay is {n} nights." },
      blocked: "Not every night before {date} is available.",
      noDeparture: "A stay cannot end on {date}.",
      guests: "Guests",
      adults: "Adults",
      children: "Children",
      adultsN: { one: "{n} adult", other: "{n} adults" },
      childrenN: { one: "{n} child", other: "{n} children" },
      tooManyGuests: { one: "This property takes at most {n} guest.", other: "This property takes at most {n} guests." },
      quoting: "Getting the price…",
      total: "Total",
      dueNow: "Due now",
      thenOn: "{amount} on {date}",
      schedule: "Payment schedule",
      deposit: "Damage deposit (refundable)",
      offer: "Offer",
      book: "Book now",
      holding: "Holding your dates…",
      justTaken: "Sorry, those nights were just taken. Please choose other dates.",
      held: "Your dates are held for you for {time}.",
      expired: "Your hold has expired and the dates were released. Please choose your dates again.",
      startOver: "Choose dates again",
      cancel: "Cancel",
      yourDetails: "Your details",
      firstName: "First name",
      lastName: "Last name",
      email: "Email",
      phone: "Phone",
      country: "Country",
      notes: "Requests or notes",
      optional: "optional",
      selectOne: "Select…",
      required: "This field is required.",
      badEmail: "Enter a valid email address, like name@example.com.",
      fixErrors: { one: "Please correct the field marked below.", other: "Please correct the {n} fields marked below." },
      toPayment: "Continue to payment",
      payment: "Payment",
      cardNumber: "Card number",
      cardName: "Name on card",
      expMonth: "Expiry month",
      expYear: "Expiry year",
      cvc: "Security code (CVC)",
      card: "Card",
      testMode: "Test mode: no real card is charged. Use the test card 4242 4242 4242 4242.",
      pay: "Pay {amount}",
      confirmBooking: "Confirm booking",
      nothingDue: "Nothing is due now.",
      paying: "Processing your payment…",
      declined: "The payment was declined.",
      incomplete: "The payment is not complete yet. Please try again.",
      cardFormFailed: "The card form could not be loaded. Please try again later.",
      confirmed: "Your booking is confirmed",
      reference: "Booking reference: {id}",
      redirecting: "Taking you to the confirmation page…",
      network: "The booking service could not be reached. Please check your connection and try again.",
      rateLimited: "Too many requests. Please wait a moment and try again.",
      busy: "The booking service is busy. Please try again in a moment.",
      error: "Something went wrong. Please try again.",
      property: "Property",
    },
    it: {
      loading: "Caricamento…",
      notSetUp: "Questo modulo di prenotazione non è configurato: manca la chiave dell'account.",
      refused: "La prenotazione online non è disponibile su questo sito in questo momento: il servizio di prenotazione ha rifiutato il sito o non è raggiungibile.",
      retry: "Riprova",
      noProperties: "Nessuna struttura è prenotabile su questo sito.",
      unknownProperty: "Questa struttura non è prenotabile su questo sito.",
      chooseProperty: "Scegli una struttura",
      guestsMax: { one: "Fino a {n} ospite", other: "Fino a {n} ospiti" },
      bedrooms: { one: "{n} camera", other: "{n} camere" },
      changeProperty: "Cambia struttura",
      dates: "Date",
      prevMonth: "Mese precedente",
      nextMonth: "Mese successivo",
      pickArrival: "Seleziona la data di arrivo.",
      pickDeparture: "Arrivo {date}. Ora seleziona la data di partenza.",
      minStay: { one: "Soggiorno minimo: {n} notte.", other: "Soggiorno minimo: {n} notti." },
      nights: { one: "{n} notte", other: "{n} notti" },
      clearDates: "Cancella le date",
      dayUnavailable: "non disponibile",
      dayNoArrival: "nessun arrivo in questo giorno",
      dayNoDeparture: "nessuna partenza in questo giorno",
      dayArrival: "il tuo arrivo",
      dayDeparture: "la tua partenza",
      dayInStay: "nel tuo soggiorno",
      cannotArrive: "Un soggiorno non può iniziare il {date}.",
      tooShort: { one: "Dal {date} il soggiorno minimo è di {n} notte.", other: "Dal {date} il soggiorno minimo è di {n} notti." },
      blocked: "Non tutte le notti prima del {date} sono disponibili.",
      noDeparture: "Un soggiorno non può finire il {date}.",
      guests: "Ospiti",
      adults: "Adulti",
      children: "Bambini",
      adultsN: { one: "{n} adulto", other: "{n} adulti" },
      childrenN: { one: "{n} bambino", other: "{n} bambini" },
      tooManyGuests: { one: "Questa struttura accoglie al massimo {n} ospite.", other: "Questa struttura accoglie al massimo {n} ospiti." },
      quoting: "Calcolo del prezzo…",
      total: "Totale",
      dueNow: "Da pagare ora",
      thenOn: "{amount} il {date}",
      schedule: "Piano dei pagamenti",
      deposit: "Deposito cauzionale (rimborsabile)",
      offer: "Offerta",
      book: "Prenota ora",
      holding: "Blocchiamo le tue date…",
      justTaken: "Spiacenti, quelle notti sono appena state prenotate. Scegli altre date.",
      held: "Le tue date sono bloccate per te per {time}.",
      expired: "Il blocco è scaduto e le date sono state liberate. Scegli di nuovo le date.",
      startOver: "Scegli di nuovo le date",
      cancel: "Annulla",
      yourDetails: "I tuoi dati",
      firstName: "Nome",
      lastName: "Cognome",
      email: "Email",
      phone: "Telefono",
      country: "Paese",
      notes: "Richieste o note",
      optional: "facoltativo",
      selectOne: "Seleziona…",
      required: "Questo campo è obbligatorio.",
      badEmail: "Inserisci un indirizzo email valido, come nome@example.com.",
      fixErrors: { one: "Correggi il campo indicato qui sotto.", other: "Correggi i {n} campi indicati qui sotto." },
      toPayment: "Continua al pagamento",
      payment: "Pagamento",
      cardNumber: "Numero della carta",
      cardName: "Nome sulla carta",
      expMonth: "Mese di scadenza",
      expYear: "Anno di scadenza",
      cvc: "Codice di sicurezza (CVC)",
      card: "Carta",
      testMode: "Modalità di prova: nessuna carta reale viene addebitata. Usa la carta di prova 4242 4242 4242 4242.",
      pay: "Paga {amount}",
      confirmBooking: "Conferma la prenotazione",
      nothingDue: "Non c'è nulla da pagare ora.",
      paying: "Elaborazione del pagamento…",
      declined: "Il pagamento è stato rifiutato.",
      incomplete: "Il pagamento non è ancora completo. Riprova.",
      cardFormFailed: "Non è stato possibile caricare il modulo della carta. Riprova più tardi.",
      confirmed: "La tua prenotazione è confermata",
      reference: "Riferimento della prenotazione: {id}",
      redirecting: "Ti portiamo alla pagina di conferma…",
      network: "Il servizio di prenotazione non è raggiungibile. Controlla la connessione e riprova.",
      rateLimited: "Troppe richieste. Attendi un momento e riprova.",
      busy: "Il servizio di prenotazione è occupato. Riprova tra un momento.",
      error: "Qualcosa è andato storto. Riprova.",
      property: "Struttura",
    },
    de: {
      loading: "Wird geladen…",
      notSetUp: "Dieses Buchungsformular ist nicht eingerichtet: es fehlt der Kontoschlüssel.",
      refused: "Online-Buchung ist auf dieser Website derzeit nicht möglich: der Buchungsdienst hat diese Website abgelehnt oder ist nicht erreichbar.",
      retry: "Erneut versuchen",
      noProperties: "Auf dieser Website kann keine Unterkunft gebucht werden.",
      unknownProperty: "Diese Unterkunft kann auf dieser Website nicht gebucht werden.",
      chooseProperty: "Unterkunft wählen",
      guestsMax: { one: "Bis zu {n} Gast", other: "Bis zu {n} Gäste" },
      bedrooms: { one: "{n} Schlafzimmer", other: "{n} Schlafzimmer" },
      changeProperty: "Unterkunft ändern",
      dates: "Reisedaten",
      prevMonth: "Vorheriger Monat",
      nextMonth: "Nächster Monat",
      pickArrival: "Wählen Sie Ihr Anreisedatum.",
      pickDeparture: "Anreise {date}. Wählen Sie jetzt Ihr Abreisedatum.",
      minStay: { one: "Mindestaufenthalt: {n} Nacht.", other: "Mindestaufenthalt: {n} Nächte." },
      nights: { one: "{n} Nacht", other: "{n} Nächte" },
      clearDates: "Daten löschen",
      dayUnavailable: "nicht verfügbar",
      dayNoArrival: "keine Anreise an diesem Tag",
      dayNoDeparture: "keine Abreise an diesem Tag",
      dayArrival: "Ihre Anreise",
      dayDeparture: "Ihre Abreise",
      dayInStay: "in Ihrem Aufenthalt",
      cannotArrive: "Ein Aufenthalt kann nicht am {date} beginnen.",
      tooShort: { one: "Ab {date} beträgt der Mindestaufenthalt {n} Nacht.", other: "Ab {date} beträgt der Mindestaufenthalt {n} Nächte." },
      blocked: "Nicht alle Nächte vor dem {date} sind verfügbar.",
      noDeparture: "Ein Aufenthalt kann nicht am {date} enden.",
      guests: "Gäste",
      adults: "Erwachsene",
      children: "Kinder",
      adultsN: { one: "{n} Erwachsener", other: "{n} Erwachsene" },
      childrenN: { one: "{n} Kind", other: "{n} Kinder" },
      tooManyGuests: { one: "Diese Unterkunft bietet Platz für höchstens {n} Gast.", other: "Diese Unterkunft bietet Platz für höchstens {n} Gäste." },
      quoting: "Preis wird berechnet…",
      total: "Gesamt",
      dueNow: "Jetzt fällig",
      thenOn: "{amount} am {date}",
      schedule: "Zahlungsplan",
      deposit: "Kaution (erstattbar)",
      offer: "Angebot",
      book: "Jetzt buchen",
      holding: "Ihre Daten werden reserviert…",
      justTaken: "Leider wurden diese Nächte gerade gebucht. Bitte wählen Sie andere Daten.",
      held: "Ihre Daten sind noch {time} für Sie reserviert.",
      expired: "Ihre Reservierung ist abgelaufen und die Daten wurden freigegeben. Bitte wählen Sie Ihre Daten erneut.",
      startOver: "Daten erneut wählen",
      cancel: "Abbrechen",
      yourDetails: "Ihre Angaben",
      firstName: "Vorname",
      lastName: "Nachname",
      email: "E-Mail",
      phone: "Telefon",
      country: "Land",
      notes: "Wünsche oder Hinweise",
      optional: "optional",
      selectOne: "Bitte wählen…",
      required: "Dieses Feld ist erforderlich.",
      badEmail: "Geben Sie eine gültige E-Mail-Adresse ein, z. B. name@example.com.",
      fixErrors: { one: "Bitte korrigieren Sie das unten markierte Feld.", other: "Bitte korrigieren Sie die {n} unten markierten Felder." },
      toPayment: "Weiter zur Zahlung",
      payment: "Zahlung",
      cardNumber: "Kartennummer",
      cardName: "Name auf der Karte",
      expMonth: "Ablaufmonat",
      expYear: "Ablaufjahr",
      cvc: "Sicherheitscode (CVC)",
      card: "Karte",
      testMode: "Testmodus: keine echte Karte wird belastet. Verwenden Sie die Testkarte 4242 4242 4242 4242.",
      pay: "{amount} bezahlen",
      confirmBooking: "Buchung bestätigen",
      nothingDue: "Jetzt ist nichts fällig.",
      paying: "Ihre Zahlung wird verarbeitet…",
      declined: "Die Zahlung wurde abgelehnt.",
      incomplete: "Die Zahlung ist noch nicht abgeschlossen. Bitte versuchen Sie es erneut.",
      cardFormFailed: "Das Kartenformular konnte nicht geladen werden. Bitte versuchen Sie es später erneut.",
      confirmed: "Ihre Buchung ist bestätigt",
      reference: "Buchungsnummer: {id}",
      redirecting: "Sie werden zur Bestätigungsseite weitergeleitet…",
      network: "Der Buchungsdienst ist nicht erreichbar. Bitte prüfen Sie Ihre Verbindung und versuchen Sie es erneut.",
      rateLimited: "Zu viele Anfragen. Bitte warten Sie einen Moment und versuchen Sie es erneut.",
      busy: "Der Buchungsdienst ist ausgelastet. Bitte versuchen Sie es gleich noch einmal.",
      error: "Etwas ist schiefgelaufen. Bitte versuchen Sie es erneut.",
      property: "Unterkunft",
    },
    fr: {
      loading: "Chargement…",
      notSetUp: "Ce formulaire de réservation n'est pas configuré : la clé du compte manque.",
      refused: "La réservation en ligne n'est pas disponible sur ce site pour le moment : le service de réservation a refusé ce site ou ne répond pas.",
      retry: "Réessayer",
      noProperties: "Aucun logement ne peut être réservé sur ce site.",
      unknownProperty: "Ce logement ne peut pas être réservé sur ce site.",
      chooseProperty: "Choisissez un logement",
      guestsMax: { one: "Jusqu'à {n} personne", other: "Jusqu'à {n} personnes" },
      bedrooms: { one: "{n} chambre", other: "{n} chambres" },
      changeProperty: "Changer de logement",
      dates: "Dates",
      prevMonth: "Mois précédent",
      nextMonth: "Mois suivant",
      pickArrival: "Choisissez votre date d'arrivée.",
      pickDeparture: "Arrivée le {date}. Choisissez maintenant votre date de départ.",
      minStay: { one: "Séjour minimum : {n} nuit.", other: "Séjour minimum : {n} nuits." },
      nights: { one: "{n} nuit", other: "{n} nuits" },
      clearDates: "Effacer les dates",
      dayUnavailable: "indisponible",
      dayNoArrival: "pas d'arrivée ce jour",
      dayNoDeparture: "pas de départ ce jour",
      dayArrival: "votre arrivée",
      dayDeparture: "votre départ",
      dayInStay: "dans votre séjour",
      cannotArrive: "Un séjour ne peut pas commencer le {date}.",
      tooShort: { one: "À partir du {date}, le séjour minimum est de {n} nuit.", other: "À partir du {date}, le séjour minimum est de {n} nuits." },
      blocked: "Toutes les nuits avant le {date} ne sont pas disponibles.",
      noDeparture: "Un séjour ne peut pas finir le {date}.",
      guests: "Voyageurs",
      adults: "Adultes",
      children: "Enfants",
      adultsN: { one: "{n} adulte", other: "{n} adultes" },
      childrenN: { one: "{n} enfant", other: "{n} enfants" },
      tooManyGuests: { one: "Ce logement accueille au plus {n} personne.", other: "Ce logement accueille au plus {n} personnes." },
      quoting: "Calcul du prix…",
      total: "Total",
      dueNow: "À payer maintenant",
      thenOn: "{amount} le {date}",
      schedule: "Échéancier",
      deposit: "Caution (remboursable)",
      offer: "Offre",
      book: "Réserver",
      holding: "Nous bloquons vos dates…",
      justTaken: "Désolé, ces nuits viennent d'être réservées. Veuillez choisir d'autres dates.",
      held: "Vos dates vous sont réservées pendant {time}.",
      expired: "Votre réservation temporaire a expiré et les dates ont été libérées. Veuillez choisir de nouveau vos dates.",
      startOver: "Choisir de nouveau les dates",
      cancel: "Annuler",
      yourDetails: "Vos coordonnées",
      firstName: "Prénom",
      lastName: "Nom",
      email: "E-mail",
      phone: "Téléphone",
      country: "Pays",
      notes: "Demandes ou remarques",
      optional: "facultatif",
      selectOne: "Choisir…",
      required: "Ce champ est obligatoire.",
      badEmail: "Saisissez une adresse e-mail valide, comme nom@example.com.",
      fixErrors: { one: "Veuillez corriger le champ signalé ci-dessous.", other: "Veuillez corriger les {n} champs signalés ci-dessous." },
      toPayment: "Continuer vers le paiement",
      payment: "Paiement",
      cardNumber: "Numéro de carte",
      cardName: "Nom sur la carte",
      expMonth: "Mois d'expiration",
      expYear: "Année d'expiration",
      cvc: "Code de sécurité (CVC)",
      card: "Carte",
      testMode: "Mode test : aucune vraie carte n'est débitée. Utilisez la carte de test 4242 4242 4242 4242.",
      pay: "Payer {amount}",
      confirmBooking: "Confirmer la réservation",
      nothingDue: "Rien n'est à payer maintenant.",
      paying: "Paiement en cours…",
      declined: "Le paiement a été refusé.",
      incomplete: "Le paiement n'est pas encore terminé. Veuillez réessayer.",
      cardFormFailed: "Le formulaire de carte n'a pas pu être chargé. Veuillez réessayer plus tard.",
      confirmed: "Votre réservation est confirmée",
      reference: "Référence de réservation : {id}",
      redirecting: "Redirection vers la page de confirmation…",
      network: "Le service de réservation est injoignable. Vérifiez votre connexion et réessayez.",
      rateLimited: "Trop de demandes. Patientez un instant et réessayez.",
      busy: "Le service de réservation est occupé. Réessayez dans un instant.",
      error: "Une erreur s'est produite. Veuillez réessayer.",
      property: "Logement",
    },
    es: {
      loading: "Cargando…",
      notSetUp: "Este formulario de reserva no está configurado: falta la clave de la cuenta.",
      refused: "La reserva en línea no está disponible en este sitio en este momento: el servicio de reservas rechazó este sitio o no responde.",
      retry: "Reintentar",
      noProperties: "No se puede reservar ningún alojamiento en este sitio.",
      unknownProperty: "Este alojamiento no se puede reservar en este sitio.",
      chooseProperty: "Elige un alojamiento",
      guestsMax: { one: "Hasta {n} huésped", other: "Hasta {n} huéspedes" },
      bedrooms: { one: "{n} dormitorio", other: "{n} dormitorios" },
      changeProperty: "Cambiar de alojamiento",
      dates: "Fechas",
      prevMonth: "Mes anterior",
      nextMonth: "Mes siguiente",
      pickArrival: "Selecciona tu fecha de llegada.",
      pickDeparture: "Llegada el {date}. Ahora selecciona tu fecha de salida.",
      minStay: { one: "Estancia mínima: {n} noche.", other: "Estancia mínima: {n} noches." },
      nights: { one: "{n} noche", other: "{n} noches" },
      clearDates: "Borrar fechas",
      dayUnavailable: "no disponible",
      dayNoArrival: "sin llegadas este día",
      dayNoDeparture: "sin salidas este día",
      dayArrival: "tu llegada",
      dayDeparture: "tu salida",
      dayInStay: "en tu estancia",
      cannotArrive: "Una estancia no puede empezar el {date}.",
      tooShort: { one: "Desde el {date} la estancia mínima es de {n} noche.", other: "Desde el {date} la estancia mínima es de {n} noches." },
      blocked: "No todas las noches antes del {date} están disponibles.",
      noDeparture: "Una estancia no puede terminar el {date}.",
      guests: "Huéspedes",
      adults: "Adultos",
      children: "Niños",
      adultsN: { one: "{n} adulto", other: "{n} adultos" },
      childrenN: { one: "{n} niño", other: "{n} niños" },
      tooManyGuests: { one: "Este alojamiento admite como máximo {n} huésped.", other: "Este alojamiento admite como máximo {n} huéspedes." },
      quoting: "Calculando el precio…",
      total: "Total",
      dueNow: "A pagar ahora",
      thenOn: "{amount} el {date}",
      schedule: "Calendario de pagos",
      deposit: "Depósito por daños (reembolsable)",
      offer: "Oferta",
      book: "Reservar ahora",
      holding: "Reservando tus fechas…",
      justTaken: "Lo sentimos, esas noches se acaban de reservar. Elige otras fechas.",
      held: "Tus fechas están reservadas para ti durante {time}.",
      expired: "Tu reserva temporal ha caducado y las fechas se han liberado. Elige tus fechas de nuevo.",
      startOver: "Elegir fechas de nuevo",
      cancel: "Cancelar",
      yourDetails: "Tus datos",
      firstName: "Nombre",
      lastName: "Apellidos",
      email: "Correo electrónico",
      phone: "Teléfono",
      country: "País",
      notes: "Peticiones o notas",
      optional: "opcional",
      selectOne: "Selecciona…",
      required: "Este campo es obligatorio.",
      badEmail: "Introduce un correo electrónico válido, como nombre@example.com.",
      fixErrors: { one: "Corrige el campo indicado abajo.", other: "Corrige los {n} campos indicados abajo." },
      toPayment: "Continuar al pago",
      payment: "Pago",
      cardNumber: "Número de tarjeta",
      cardName: "Nombre en la tarjeta",
      expMonth: "Mes de caducidad",
      expYear: "Año de caducidad",
      cvc: "Código de seguridad (CVC)",
      card: "Tarjeta",
      testMode: "Modo de prueba: no se cobra ninguna tarjeta real. Usa la tarjeta de prueba 4242 4242 4242 4242.",
      pay: "Pagar {amount}",
      confirmBooking: "Confirmar la reserva",
      nothingDue: "No hay nada que pagar ahora.",
      paying: "Procesando tu pago…",
      declined: "El pago ha sido rechazado.",
      incomplete: "El pago aún no se ha completado. Inténtalo de nuevo.",
      cardFormFailed: "No se pudo cargar el formulario de la tarjeta. Inténtalo más tarde.",
      confirmed: "Tu reserva está confirmada",
      reference: "Referencia de la reserva: {id}",
      redirecting: "Te llevamos a la página de confirmación…",
      network: "No se puede contactar con el servicio de reservas. Comprueba tu conexión e inténtalo de nuevo.",
      rateLimited: "Demasiadas solicitudes. Espera un momento e inténtalo de nuevo.",
      busy: "El servicio de reservas está ocupado. Inténtalo de nuevo en un momento.",
      error: "Algo ha ido mal. Inténtalo de nuevo.",
      property: "Alojamiento",
    },
  };

  // ISO 3166-1 alpha-2 codes, for the guest's country (named in the page's language).
  const COUNTRIES = ("AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ " +
    "BR BS BT BV BW BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER " +
    "ES ET FI FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM " +
    "IN IO IQ IR IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF " +
    "MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK " +
    "PL PM PN PR PS PT PW PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD " +
    "TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW").split(" ");

  // ---------------------------------------------------------------- dates (YYYY-MM-DD, UTC)

  const pad = (n) => String(n).padStart(2, "0");
  const iso = (d) => `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
  const toDate = (s) => new Date(Date.UTC(+s.slice(0, 4), +s.slice(5, 7) - 1, +s.slice(8, 10)));
  const addDays = (s, n) => { const d = toDate(s); d.setUTCDate(d.getUTCDate() + n); return iso(d); };
  const monthOf = (s) => s.slice(0, 8) + "01";
  const addMonths = (s, n) => {
    const d = toDate(monthOf(s));
    d.setUTCMonth(d.getUTCMonth() + n);
    return iso(d);
  };
  const daysIn = (m) => Math.round((toDate(addMonths(m, 1)) - toDate(monthOf(m))) / 864e5);
  const nightsBetween = (a, b) => Math.round((toDate(b) - toDate(a)) / 864e5);
  // weekday is 0 for Monday … 6 for Sunday.
  const weekday = (s) => (toDate(s).getUTCDay() + 6) % 7;
  const localToday = () => { const n = new Date(); return `${n.getFullYear()}-${pad(n.getMonth() + 1)}-${pad(n.getDate())}`; };

  // parseDate reads a prefilled date: YYYY-MM-DD, or day first (DD-MM-YYYY, DD/MM/YYYY,
  // DD.MM.YYYY) as 365villas' forms write it. Anything else, or no such day: "".
  function parseDate(v) {
    const s = String(v || "").trim();
    let y, m, d, r;
    if ((r = /^(\d{4})-(\d{1,2})-(\d{1,2})$/.exec(s))) [y, m, d] = [r[1], r[2], r[3]];
    else if ((r = /^(\d{1,2})[/.-](\d{1,2})[/.-](\d{4})$/.exec(s))) [y, m, d] = [r[3], r[2], r[1]];
    else return "";
    const out = `${y}-${pad(+m)}-${pad(+d)}`;
    return iso(toDate(out)) === out ? out : "";
  }

  // ---------------------------------------------------------------- small helpers

  // h makes an element. props: class, text, on<event> handlers, DOM properties given as
  // non-strings (value, checked…), other attributes as strings. Children are nodes or text.
  function h(tag, props, ...kids) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(props || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") el.className = v;
      else if (k === "text") el.textContent = v;
      else if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
      else if (v === true) el.setAttribute(k, "");
      else el.setAttribute(k, String(v));
    }
    for (const c of kids.flat(Infinity)) {
      if (c === null || c === undefined || c === false) continue;
      el.append(c instanceof Node ? c : String(c));
    }
    return el;
  }

  function uuid() {
    if (window.crypto && typeof crypto.randomUUID === "function") {
      try { return crypto.randomUUID(); } catch (_) { /* not a secure context */ }
    }
    const b = crypto.getRandomValues(new Uint8Array(16));
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    const x = Array.from(b, (v) => v.toString(16).padStart(2, "0")).join("");
    return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
  }

  const truthy = (v) => v !== undefined && v !== null && !/^(|0|false|no|off)$/i.test(String(v).trim());
  const intIn = (v, lo, hi, def) => {
    const n = parseInt(String(v ?? "").trim(), 10);
    return Number.isFinite(n) && n >= lo && n <= hi ? n : def;
  };

  let stripeLoading = null;
  function loadStripe() {
    if (window.Stripe) return Promise.resolve(window.Stripe);
    if (!stripeLoading) {
      stripeLoading = new Promise((resolve, reject) => {
        const s = document.createElement("script");
        s.src = STRIPE_JS;
        s.async = true;
        s.onload = () => (window.Stripe ? resolve(window.Stripe) : reject(new Error("Stripe.js did not load")));
        s.onerror = () => { stripeLoading = null; reject(new Error("Stripe.js did not load")); };
        document.head.append(s);
      });
    }
    return stripeLoading;
  }

  // ---------------------------------------------------------------- configuration

  // config reads the script's data- attributes, then the 365villas plugin's globals.
  function config(script) {
    const d = script.dataset;
    const g = (name) => {
      const v = window[name];
      return v === undefined || v === null ? "" : String(v).trim();
    };
    const pick = (attr, global) => (d[attr] !== undefined && d[attr] !== "" ? String(d[attr]).trim() : global ? g(global) : "");
    const src = new URL(script.src, location.href);
    const file = src.pathname.split("/").pop().replace(/\.js$/, "");
    const only = pick("lockProperty", "_365_one_property_only");
    let property = pick("property", "_365_property_id");
    if (!/^\d+$/.test(property)) property = "";
    const locked = truthy(only);
    if (!property && /^\d+$/.test(only)) property = only;
    // The widget speaks en, it, de, fr and es; any other language is shown in English.
    const rawLang = (pick("lang", "_365_language") || document.documentElement.lang || "en").replace(/_/g, "-");
    let lang = rawLang.split("-")[0].toLowerCase();
    let locale = rawLang;
    try { locale = Intl.getCanonicalLocales(rawLang)[0]; } catch (_) { locale = lang; }
    if (!STRINGS[lang]) [lang, locale] = ["en", "en"];
    return {
      file,
      base: src.origin,
      key: pick("key", "_365_owner_token"),
      property,
      // bcalendar.js and bcalendar-more.js sit on a property's page: its property only.
      locked: locked || (property !== "" && /^bcalendar/.test(file)),
      lang,
      strings: STRINGS[lang],
      locale,
      months: intIn(pick("months", "_365_number_month"), 1, 12, 2),
      arrival: parseDate(pick("arrival", "_365_start_date")),
      departure: parseDate(pick("departure", "_365_end_date")),
      adults: intIn(pick("adults", "_365_adults"), 1, 1000, 0),
      children: intIn(pick("children", "_365_children"), 0, 1000, 0),
      redirect: pick("redirect", "_365_redirect_url"),
      style: pick("style", "_365_custom_style"),
      showOffers: truthy(pick("showDiscounts", "_365_show_star_discount")),
      target: d.target || "",
    };
  }

  // ---------------------------------------------------------------- one widget

  function start(script) {
    const cfg = config(script);
    const T = cfg.strings;
    const plural = new Intl.PluralRules(cfg.locale);
    const t = (k, vars) => {
      let s = T[k] ?? STRINGS.en[k] ?? k;
      if (typeof s === "object") s = s[plural.select(vars && typeof vars.n === "number" ? vars.n : 1)] || s.other;
      return s.replace(/\{(\w+)\}/g, (_, name) => (vars && vars[name] !== undefined ? String(vars[name]) : ""));
    };
    const fmtDay = new Intl.DateTimeFormat(cfg.locale, { day: "numeric", month: "short", year: "numeric", timeZone: "UTC" });
    const fmtLong = new Intl.DateTimeFormat(cfg.locale, { weekday: "long", day: "numeric", month: "long", year: "numeric", timeZone: "UTC" });
    const fmtMonth = new Intl.DateTimeFormat(cfg.locale, { month: "long", year: "numeric", timeZone: "UTC" });
    const fmtWeekShort = new Intl.DateTimeFormat(cfg.locale, { weekday: "short", timeZone: "UTC" });
    const fmtWeekLong = new Intl.DateTimeFormat(cfg.locale, { weekday: "long", timeZone: "UTC" });
    const day = (s) => (s ? fmtDay.format(toDate(s)) : "");
    const uid = "vros-be-" + Math.random().toString(36).slice(2, 9);
    const id = (name) => `${uid}-${name}`;

    // money shows an API amount (a decimal string) in the currency, exactly.
    const money = (amount, currency, whole) => {
      if (amount === null || amount === undefined || amount === "") return "";
      const s = String(amount);
      try {
        const digits = whole ? 0 : (s.split(".")[1] || "").length;
        return new Intl.NumberFormat(cfg.locale, { style: "currency", currency, minimumFractionDigits: digits, maximumFractionDigits: digits }).format(s);
      } catch (_) {
        return `${s} ${currency || ""}`.trim();
      }
    };

    // ---- the root and its regions
    let host = null;
    if (cfg.target) host = document.querySelector(cfg.target);
    if (!host) host = script.parentElement;
    if (!host || host === document.head || host === document.documentElement) {
      host = document.body || document.documentElement;
    }
    const root = h("div", { class: ["vros-be", cfg.style].filter(Boolean).join(" "), lang: cfg.locale, "data-vros-booking": cfg.file });
    const live = h("div", { class: "vros-be-live", role: "status", "aria-live": "polite" });
    const main = h("div", { class: "vros-be-main" });
    root.append(main, live);
    if (host === script.parentElement) script.after(root);
    else host.append(root);

    const announce = (msg) => { live.textContent = ""; live.textContent = msg; };

    // ---- state
    const S = {
      api: `${cfg.base}/widget/api/v1/${encodeURIComponent(cfg.key)}`,
      site: null,
      property: null,
      today: localToday(),
      view: "",
      days: new Map(),
      calSeq: 0,
      calLoading: false,
      arrival: "",
      departure: "",
      adults: 0,
      children: 0,
      quote: null,
      quoteErr: null,
      quoteSeq: 0,
      quoting: false,
      notice: "",
      bookKey: "",
      bookFor: "",
      checkout: null,
      step: "",
      busy: false,
      timer: 0,
      focusDate: "",
      stripe: null,
      stripePaid: false,
    };

    // ---- the public API
    async function api(method, path, body, headers) {
      const init = { method, headers: { Accept: "application/json", ...(headers || {}) }, credentials: "omit", mode: "cors" };
      if (body !== undefined) {
        init.headers["Content-Type"] = "application/json";
        init.body = JSON.stringify(body);
      }
      let resp;
      try {
        resp = await fetch(S.api + path, init);
      } catch (_) {
        return { error: { code: "network" } };
      }
      let j = null;
      try { j = await resp.json(); } catch (_) { /* not JSON */ }
      if (resp.ok && j && typeof j === "object" && "data" in j) return { data: j.data, status: resp.status };
      const e = (j && j.error && typeof j.error === "object") ? j.error : {};
      const code = e.code || (resp.status === 429 ? "rate_limited" : resp.status >= 500 ? "unavailable" : "error");
      return { error: { code, field: e.field || "", message: e.message || "", status: resp.status } };
    }

    // problem is the sentence for an API refusal that has no place of its own.
    function problem(e) {
      switch (e.code) {
        case "network": return t("network");
        case "rate_limited": return t("rateLimited");
        case "unavailable": return t("busy");
        case "dates_taken": return t("justTaken");
        case "checkout_expired": return t("expired");
        case "payment_incomplete": return t("incomplete");
        case "payment_declined": return t("declined");
        default: return e.message ? stripField(e) : t("error");
      }
    }
    // stripField drops the "field: " a message starts with, for a message shown at its field.
    const stripField = (e) => (e.field && e.message.startsWith(e.field + ": ") ? e.message.slice(e.field.length + 2) : e.message);

    // ---- steps
    function show(step, focusHeading) {
      S.step = step;
      main.replaceChildren();
      if (step !== "guest" && step !== "pay") stopTimer();
      ({ loading: viewLoading, failed: viewFailed, choose: viewChoose, dates: viewDates, guest: viewGuest, pay: viewPay, done: viewDone, expired: viewExpired })[step]();
      if (focusHeading) {
        const hd = main.querySelector("h2");
        if (hd) hd.focus();
      }
    }

    const heading = (text) => h("h2", { class: "vros-be-title", tabindex: "-1", text });
    const alertBox = (text, kind) => h("p", { class: `vros-be-alert vros-be-alert-${kind || "error"}`, role: "alert", text });

    function viewLoading() {
      main.append(h("p", { class: "vros-be-loading", text: t("loading") }));
    }

    function viewFailed() {
      main.append(alertBox(S.failure || t("refused")));
      if (S.failure !== t("notSetUp")) main.append(h("button", { type: "button", class: "vros-be-button", text: t("retry"), onclick: () => boot(true) }));
    }

    async function boot(user) {
      S.failure = "";
      if (!cfg.key) {
        S.failure = t("notSetUp");
        show("failed");
        return;
      }
      show("loading");
      const r = await api("GET", `/site?lang=${encodeURIComponent(cfg.lang)}`);
      if (r.error) {
        // A refused origin gets no CORS header: the browser hides the answer, and the fetch
        // fails as if the service could not be reached.
        S.failure = r.error.code === "network" || r.error.code === "origin_not_allowed" ? t("refused") : problem(r.error);
        show("failed", user);
        return;
      }
      S.site = r.data || {};
      const props = Array.isArray(S.site.properties) ? S.site.properties : [];
      if (cfg.property) {
        const p = props.find((x) => String(x.id) === cfg.property);
        if (!p) {
          S.failure = t("unknownProperty");
          show("failed", user);
          return;
        }
        choose(p, false, user);
        return;
      }
      if (props.length === 1) {
        choose(props[0], false, user);
        return;
      }
      if (props.length === 0) {
        S.failure = t("noProperties");
        show("failed", user);
        return;
      }
      show("choose", user);
    }

    // ---- property chooser
    const canChange = () => !cfg.locked && S.site && Array.isArray(S.site.properties) && S.site.properties.length > 1;

    function viewChoose() {
      main.append(heading(t("chooseProperty")));
      const list = h("ul", { class: "vros-be-props" });
      for (const p of S.site.properties) {
        const facts = [p.city, p.max_guests ? t("guestsMax", { n: p.max_guests }) : "", p.bedrooms ? t("bedrooms", { n: p.bedrooms }) : ""].filter(Boolean).join(" · ");
        let img = null;
        if (typeof p.photo_url === "string" && /^https?:\/\//i.test(p.photo_url)) img = h("img", { class: "vros-be-prop-photo", src: p.photo_url, alt: "", loading: "lazy" });
        const pressed = S.property && String(S.property.id) === String(p.id);
        list.append(h("li", null, h("button", {
          type: "button", class: "vros-be-prop", "data-property": p.id, "aria-pressed": pressed ? "true" : "false",
          onclick: () => choose(p, true, true),
        }, img, h("span", { class: "vros-be-prop-name", text: p.name || `#${p.id}` }), h("span", { class: "vros-be-prop-facts", text: facts }))));
      }
      main.append(list);
    }

    function choose(p, changed, user) {
      const same = S.property && String(S.property.id) === String(p.id);
      S.property = p;
      const max = p.max_guests > 0 ? p.max_guests : 0;
      if (!same) {
        S.days = new Map();
        S.quote = null;
        S.quoteErr = null;
        if (changed) { S.arrival = ""; S.departure = ""; }
      }
      if (!S.adults) S.adults = cfg.adults || Math.min(2, max || 2);
      if (!S.children && cfg.children) S.children = cfg.children;
      if (!changed && !S.arrival && cfg.arrival) {
        S.arrival = cfg.arrival >= S.today ? cfg.arrival : "";
        S.departure = S.arrival && cfg.departure > S.arrival ? cfg.departure : "";
      }
      S.view = S.arrival ? monthOf(S.arrival) : monthOf(S.today);
      show("dates", user);
      loadCalendar();
      if (S.arrival && S.departure) requestQuote();
    }

    // ---- dates, guests and the quote
    function viewDates() {
      const p = S.property;
      const head = h("div", { class: "vros-be-head" }, heading(p.name || `#${p.id}`));
      if (canChange()) head.append(h("button", { type: "button", class: "vros-be-link", text: t("changeProperty"), onclick: () => show("choose", true) }));
      main.append(head);
      if (S.notice) {
        main.append(alertBox(S.notice));
        S.notice = "";
      }
      const cal = h("section", { class: "vros-be-dates", "aria-labelledby": id("dates") }, h("h3", { id: id("dates"), class: "vros-be-subtitle", text: t("dates") }));
      cal.append(h("div", { class: "vros-be-calendar" }));
      cal.append(h("p", { class: "vros-be-hint", id: id("hint") }));
      main.append(cal);
      main.append(guestsSection());
      main.append(h("section", { class: "vros-be-quote", "aria-live": "polite" }));
      renderCalendar();
      renderQuote();
    }

    function dayOf(d) { return S.days.get(d); }

    function canArrive(d) {
      const x = dayOf(d);
      return d >= S.today && !!x && x.available && x.arrival;
    }
    const minStay = (a) => Math.max(1, (dayOf(a) && dayOf(a).min_stay) || 1);

    // departureProblem is why d cannot end a stay from a ("" when it can).
    function departureProblem(a, d) {
      if (!a || d <= a) return "before";
      for (let x = a; x < d; x = addDays(x, 1)) {
        const n = dayOf(x);
        if (!n || !n.available) return "blocked";
      }
      const dd = dayOf(d);
      if (dd && !dd.departure) return "nodeparture";
      if (nightsBetween(a, d) < minStay(a)) return "short";
      return "";
    }

    // mode is what a press on d does: "departure", "arrival" or "" (nothing).
    function mode(d) {
      if (S.arrival && !S.departure && departureProblem(S.arrival, d) === "") return "departure";
      return canArrive(d) ? "arrival" : "";
    }

    function why(d) {
      const x = dayOf(d);
      if (S.arrival && !S.departure && d > S.arrival) {
        switch (departureProblem(S.arrival, d)) {
          case "blocked": return t("blocked", { date: day(d) });
          case "nodeparture": return t("noDeparture", { date: day(d) });
          case "short": return t("tooShort", { date: day(S.arrival), n: minStay(S.arrival) });
        }
      }
      return t("cannotArrive", { date: day(d) });
    }

    function visibleRange() {
      const first = S.view;
      const last = addDays(addMonths(S.view, cfg.months), -1);
      return [first, last];
    }

    async function loadCalendar() {
      const seq = ++S.calSeq;
      const from = S.view;
      S.calLoading = true;
      renderCalendar();
      const r = await api("GET", `/calendar?property=${encodeURIComponent(S.property.id)}&from=${from}&months=${cfg.months}`);
      if (seq !== S.calSeq) return;
      S.calLoading = false;
      if (r.error) {
        S.calError = problem(r.error);
      } else {
        S.calError = "";
        for (const x of (r.data && r.data.days) || []) {
          if (x && typeof x.date === "string") S.days.set(x.date, x);
        }
      }
      if (S.step === "dates") renderCalendar();
    }

    function renderCalendar() {
      const box = main.querySelector(".vros-be-calendar");
      if (!box) return;
      const active = box.contains(document.activeElement) ? document.activeElement : null;
      const hadFocus = active ? active.getAttribute("data-date") || (active.classList.contains("vros-be-nav-prev") ? "prev" : "next") : "";
      const [first, last] = visibleRange();
      if (!S.focusDate || S.focusDate < first || S.focusDate > last) {
        S.focusDate = S.arrival && S.arrival >= first && S.arrival <= last ? S.arrival : (S.today >= first && S.today <= last ? S.today : first);
      }
      const thisMonth = monthOf(S.today);
      const nav = h("div", { class: "vros-be-nav" },
        h("button", { type: "button", class: "vros-be-nav-prev", "aria-label": t("prevMonth"), title: t("prevMonth"), disabled: S.view <= thisMonth, onclick: () => moveView(-1) }, "‹"),
        h("button", { type: "button", class: "vros-be-nav-next", "aria-label": t("nextMonth"), title: t("nextMonth"), disabled: S.view >= addMonths(thisMonth, 24), onclick: () => moveView(1) }, "›"));
      const months = h("div", { class: "vros-be-months", "aria-busy": S.calLoading ? "true" : "false" });
      for (let i = 0; i < cfg.months; i++) months.append(monthGrid(addMonths(S.view, i)));
      box.replaceChildren(nav, months);
      if (S.calError) box.append(alertBox(S.calError));
      renderHint();
      if (hadFocus) {
        let b = box.querySelector(hadFocus === "prev" || hadFocus === "next" ? `.vros-be-nav-${hadFocus}` : `button[data-date="${S.focusDate}"]`);
        if (b && b.disabled) b = box.querySelector(`button[data-date="${S.focusDate}"]`);
        if (b) b.focus();
      }
    }

    function monthGrid(m) {
      const titleId = id("m-" + m.slice(0, 7));
      const table = h("table", { class: "vros-be-grid", role: "grid", "aria-labelledby": titleId });
      const headRow = h("tr");
      for (let i = 0; i < 7; i++) {
        const wd = addDays("2024-01-01", i); // a Monday
        headRow.append(h("th", { scope: "col", abbr: fmtWeekLong.format(toDate(wd)) }, h("span", { "aria-hidden": "true", text: fmtWeekShort.format(toDate(wd)) })));
      }
      table.append(h("thead", null, headRow));
      const body = h("tbody", { onkeydown: onGridKey });
      let row = h("tr");
      for (let i = 0; i < weekday(m); i++) row.append(h("td", { role: "gridcell", class: "vros-be-pad" }));
      const n = daysIn(m);
      for (let i = 0; i < n; i++) {
        const d = addDays(m, i);
        row.append(dayCell(d));
        if (weekday(d) === 6) {
          body.append(row);
          row = h("tr");
        }
      }
      if (row.children.length) {
        while (row.children.length < 7) row.append(h("td", { role: "gridcell", class: "vros-be-pad" }));
        body.append(row);
      }
      table.append(body);
      return h("div", { class: "vros-be-month" }, h("div", { class: "vros-be-month-title", id: titleId, text: fmtMonth.format(toDate(m)) }), table);
    }

    function dayCell(d) {
      const x = dayOf(d);
      const how = mode(d);
      const inStay = S.arrival && S.departure && d > S.arrival && d < S.departure;
      const cls = ["vros-be-day"];
      const label = [fmtLong.format(toDate(d))];
      if (d < S.today) cls.push("is-past");
      else if (!x) cls.push("is-unknown");
      else {
        if (!x.available) { cls.push("is-unavailable"); if (how !== "departure") label.push(t("dayUnavailable")); }
        else {
          if (!x.arrival) { cls.push("is-no-arrival"); label.push(t("dayNoArrival")); }
          if (x.price !== null && x.price !== undefined && x.price !== "") label.push(money(x.price, S.currency()));
          if (x.min_stay > 1) label.push(t("minStay", { n: x.min_stay }).replace(/\.$/, ""));
        }
        if (!x.departure && x.available) { cls.push("is-no-departure"); label.push(t("dayNoDeparture")); }
      }
      if (d === S.today) cls.push("is-today");
      if (d === S.arrival) { cls.push("is-start"); label.push(t("dayArrival")); }
      if (d === S.departure) { cls.push("is-end"); label.push(t("dayDeparture")); }
      if (inStay) { cls.push("is-in-range"); label.push(t("dayInStay")); }
      if (!how) cls.push("is-disabled");
      const price = x && x.available && x.price !== null && x.price !== undefined && x.price !== "" ? money(x.price, S.currency(), true) : "";
      const btn = h("button", {
        type: "button", class: cls.join(" "), "data-date": d, tabindex: d === S.focusDate ? "0" : "-1",
        "aria-label": label.join(", "), "aria-disabled": how ? "false" : "true",
        "aria-pressed": d === S.arrival || d === S.departure ? "true" : "false",
        onclick: () => pick(d),
      }, h("span", { class: "vros-be-day-num", "aria-hidden": "true", text: String(+d.slice(8)) }),
        price ? h("span", { class: "vros-be-day-price", "aria-hidden": "true", text: price }) : null);
      const selected = d === S.arrival || d === S.departure || inStay;
      return h("td", { role: "gridcell", "aria-selected": selected ? "true" : "false" }, btn);
    }

    S.currency = () => (S.site && S.site.currency) || "EUR";

    function renderHint() {
      const hint = main.querySelector(".vros-be-hint");
      if (!hint) return;
      hint.replaceChildren();
      if (!S.arrival) hint.append(t("pickArrival"));
      else if (!S.departure) hint.append(t("pickDeparture", { date: day(S.arrival) }), " ", h("strong", { class: "vros-be-minstay", text: t("minStay", { n: minStay(S.arrival) }) }));
      else {
        const n = nightsBetween(S.arrival, S.departure);
        hint.append(h("strong", { class: "vros-be-stay", text: `${day(S.arrival)} – ${day(S.departure)} · ${t("nights", { n })}` }));
      }
      if (S.arrival) hint.append(" ", h("button", { type: "button", class: "vros-be-link", text: t("clearDates"), onclick: clearDates }));
    }

    function clearDates() {
      S.arrival = "";
      S.departure = "";
      S.quote = null;
      S.quoteErr = null;
      S.quoteSeq++;
      renderCalendar();
      renderQuote();
      const b = main.querySelector(`button[data-date="${S.focusDate}"]`);
      if (b) b.focus();
    }

    function pick(d) {
      S.focusDate = d;
      const how = mode(d);
      if (!how) {
        if (S.arrival === d && !S.departure) { clearDates(); return; }
        announce(why(d));
        renderCalendar();
        return;
      }
      if (how === "departure") {
        S.departure = d;
        renderCalendar();
        announce(`${day(S.arrival)} – ${day(S.departure)}, ${t("nights", { n: nightsBetween(S.arrival, S.departure) })}`);
        requestQuote();
      } else {
        S.arrival = d;
        S.departure = "";
        S.quote = null;
        S.quoteErr = null;
        S.quoteSeq++;
        renderCalendar();
        renderQuote();
        announce(`${t("pickDeparture", { date: day(d) })} ${t("minStay", { n: minStay(d) })}`);
      }
      const b = main.querySelector(`button[data-date="${d}"]`);
      if (b) b.focus();
    }

    function moveView(n) {
      const thisMonth = monthOf(S.today);
      let v = addMonths(S.view, n);
      if (v < thisMonth) v = thisMonth;
      if (v === S.view) return;
      S.view = v;
      loadCalendar();
    }

    function onGridKey(ev) {
      const b = ev.target.closest && ev.target.closest("button[data-date]");
      if (!b) return;
      const d = b.getAttribute("data-date");
      let to = "";
      switch (ev.key) {
        case "ArrowLeft": to = addDays(d, -1); break;
        case "ArrowRight": to = addDays(d, 1); break;
        case "ArrowUp": to = addDays(d, -7); break;
        case "ArrowDown": to = addDays(d, 7); break;
        case "Home": to = addDays(d, -weekday(d)); break;
        case "End": to = addDays(d, 6 - weekday(d)); break;
        case "PageUp": to = sameDay(d, -1); break;
        case "PageDown": to = sameDay(d, 1); break;
        default: return;
      }
      ev.preventDefault();
      const thisMonth = monthOf(S.today);
      if (to < thisMonth) return;
      S.focusDate = to;
      const [first, last] = visibleRange();
      if (to < first) { S.view = monthOf(to); loadCalendar(); }
      else if (to > last) { S.view = addMonths(monthOf(to), -(cfg.months - 1)); loadCalendar(); }
      else renderCalendar();
      const nb = main.querySelector(`button[data-date="${to}"]`);
      if (nb) nb.focus();
    }
    function sameDay(d, n) {
      const m = addMonths(d, n);
      const dd = Math.min(+d.slice(8), daysIn(m));
      return m.slice(0, 8) + pad(dd);
    }

    // -- guests
    function maxGuests() { return S.property && S.property.max_guests > 0 ? S.property.max_guests : 0; }

    function guestsSection() {
      const max = maxGuests();
      const opts = (lo, hi, v) => {
        const out = [];
        for (let i = lo; i <= hi; i++) out.push(h("option", { value: String(i), selected: i === v, text: String(i) }));
        return out;
      };
      const limit = max || 30;
      if (S.adults > limit) S.adults = limit;
      if (S.children > limit - 1) S.children = Math.max(0, limit - 1);
      const adults = h("select", { id: id("adults"), name: "adults", class: "vros-be-input", "aria-describedby": id("guests-err"), onchange: guestsChanged }, opts(1, limit, S.adults));
      const children = h("select", { id: id("children"), name: "children", class: "vros-be-input", "aria-describedby": id("guests-err"), onchange: guestsChanged }, opts(0, Math.max(0, limit - 1), S.children));
      const fs = h("fieldset", { class: "vros-be-guests" }, h("legend", { class: "vros-be-subtitle", text: t("guests") }),
        h("div", { class: "vros-be-row" },
          h("div", { class: "vros-be-field" }, h("label", { for: id("adults"), text: t("adults") }), adults),
          h("div", { class: "vros-be-field" }, h("label", { for: id("children"), text: t("children") }), children)),
        max ? h("p", { class: "vros-be-help", text: t("guestsMax", { n: max }) }) : null,
        h("p", { class: "vros-be-error", id: id("guests-err") }));
      return fs;
    }

    function readGuests() {
      const a = main.querySelector(`#${id("adults")}`);
      const c = main.querySelector(`#${id("children")}`);
      if (a) S.adults = intIn(a.value, 1, 1000, 1);
      if (c) S.children = intIn(c.value, 0, 1000, 0);
    }

    function guestsOK() {
      const max = maxGuests();
      const err = main.querySelector(`#${id("guests-err")}`);
      const bad = max && S.adults + S.children > max;
      if (err) err.textContent = bad ? t("tooManyGuests", { n: max }) : "";
      for (const el of main.querySelectorAll(".vros-be-guests select")) el.setAttribute("aria-invalid", bad ? "true" : "false");
      return !bad;
    }

    function guestsChanged() {
      readGuests();
      if (!guestsOK()) {
        S.quote = null;
        S.quoteSeq++;
        renderQuote();
        return;
      }
      if (S.arrival && S.departure) requestQuote();
    }

    // -- quote
    const selection = () => [S.property && S.property.id, S.arrival, S.departure, S.adults, S.children].join("|");

    async function requestQuote() {
      readGuests();
      if (!S.arrival || !S.departure || !guestsOK()) return;
      const seq = ++S.quoteSeq;
      S.quoting = true;
      S.quoteErr = null;
      renderQuote();
      const r = await api("POST", "/quote", { property: Number(S.property.id), arrival: S.arrival, departure: S.departure, adults: S.adults, children: S.children, lang: cfg.lang });
      if (seq !== S.quoteSeq) return;
      S.quoting = false;
      if (r.error) {
        S.quote = null;
        if (r.error.code === "dates_taken") {
          justTaken(false);
          return;
        }
        S.quoteErr = r.error;
      } else {
        S.quote = r.data;
        S.quoteFor = selection();
      }
      if (S.step === "dates") renderQuote();
    }

    function quoteLines(q) {
      const rows = h("tbody");
      for (const l of q.lines || []) {
        const offer = l.kind === "discount";
        rows.append(h("tr", { class: `vros-be-line vros-be-line-${l.kind || "other"}` },
          h("th", { scope: "row" }, offer && cfg.showOffers ? h("span", { class: "vros-be-star", "aria-label": t("offer"), title: t("offer") }, "★ ") : null, l.label || ""),
          h("td", { text: money(l.amount, q.currency) })));
      }
      const foot = h("tfoot", null, h("tr", { class: "vros-be-total" }, h("th", { scope: "row", text: t("total") }), h("td", { text: money(q.total, q.currency) })));
      if (q.due_now !== undefined && q.due_now !== null && q.due_now !== q.total) {
        foot.append(h("tr", { class: "vros-be-due" }, h("th", { scope: "row", text: t("dueNow") }), h("td", { text: money(q.due_now, q.currency) })));
      }
      const table = h("table", { class: "vros-be-lines" }, h("caption", { class: "vros-be-subtitle", text: `${day(q.arrival)} – ${day(q.departure)} · ${t("nights", { n: q.nights || nightsBetween(q.arrival, q.departure) })}` }), rows, foot);
      const out = [table];
      const sched = (q.schedule || []).filter((s) => s && s.amount);
      if (sched.length > 1 || (sched.length === 1 && sched[0].amount !== q.due_now)) {
        out.push(h("div", { class: "vros-be-schedule" }, h("span", { class: "vros-be-schedule-title", text: t("schedule") }),
          h("ul", null, sched.map((s) => h("li", { text: t("thenOn", { amount: money(s.amount, q.currency), date: day(s.due_date) }) })))));
      }
      if (q.damage_deposit && Number(q.damage_deposit) > 0) out.push(h("p", { class: "vros-be-deposit", text: `${t("deposit")}: ${money(q.damage_deposit, q.currency)}` }));
      return out;
    }

    function renderQuote() {
      const box = main.querySelector(".vros-be-quote");
      if (!box) return;
      box.replaceChildren();
      if (S.quoting) box.append(h("p", { class: "vros-be-loading", text: t("quoting") }));
      else if (S.quoteErr) box.append(alertBox(problem(S.quoteErr)));
      else if (S.quote && S.quoteFor === selection()) {
        box.append(...quoteLines(S.quote));
        box.append(h("button", { type: "button", class: "vros-be-button vros-be-book", text: t("book"), onclick: book }));
        box.append(h("p", { class: "vros-be-error", id: id("book-err"), role: "alert" }));
      }
    }

    // justTaken: the nights asked for were taken by someone else. Back to the calendar,
    // freshly read, with the dates cleared and the guest told.
    function justTaken(focus) {
      S.arrival = "";
      S.departure = "";
      S.quote = null;
      S.quoteErr = null;
      S.checkout = null;
      S.bookKey = "";
      S.notice = t("justTaken");
      show("dates", false);
      loadCalendar();
      const a = main.querySelector(".vros-be-alert");
      if (a && focus) { a.setAttribute("tabindex", "-1"); a.focus(); }
    }

    // -- book: the checkout holds the nights
    async function book(ev) {
      const btn = ev.currentTarget;
      if (S.busy) return;
      readGuests();
      const sel = selection();
      if (!S.quote || S.quoteFor !== sel) return;
      // A fresh key per attempt; kept only to retry an attempt whose answer never came.
      if (!S.bookKey || S.bookFor !== sel) { S.bookKey = uuid(); S.bookFor = sel; }
      S.busy = true;
      btn.disabled = true;
      btn.textContent = t("holding");
      const err = main.querySelector(`#${id("book-err")}`);
      if (err) err.textContent = "";
      const r = await api("POST", "/checkouts", { property: Number(S.property.id), arrival: S.arrival, departure: S.departure, adults: S.adults, children: S.children, lang: cfg.lang },
        { "Idempotency-Key": S.bookKey });
      S.busy = false;
      if (r.error && r.error.code !== "network") S.bookKey = "";
      if (r.error) {
        if (r.error.code === "dates_taken") { justTaken(true); return; }
        btn.disabled = false;
        btn.textContent = t("book");
        if (err) err.textContent = problem(r.error);
        return;
      }
      S.bookKey = "";
      S.checkout = r.data;
      S.stripePaid = false;
      show("guest", true);
      startTimer();
    }

    // -- the hold's countdown
    function startTimer() {
      stopTimer();
      tick();
      S.timer = setInterval(tick, 1000);
    }
    function stopTimer() {
      if (S.timer) clearInterval(S.timer);
      S.timer = 0;
    }
    function tick() {
      const el = main.querySelector(".vros-be-hold");
      if (!S.checkout) return;
      const left = Math.max(0, Math.floor((Date.parse(S.checkout.expires_at) - Date.now()) / 1000));
      if (el) el.textContent = t("held", { time: `${Math.floor(left / 60)}:${pad(left % 60)}` });
      if (left === 0 && !S.busy) {
        stopTimer();
        holdEnded();
      }
    }
    async function holdEnded() {
      const r = await api("GET", `/checkouts/${encodeURIComponent(S.checkout.id)}`);
      if (r.data && r.data.status === "booked") { S.checkout = r.data; show("done", true); redirect(); return; }
      if (r.data && r.data.status === "held") { // the server's clock is behind ours
        S.checkout = r.data;
        if (Date.parse(r.data.expires_at) > Date.now()) { startTimer(); return; }
      }
      show("expired", true);
    }
    function viewExpired() {
      main.append(heading(S.property ? S.property.name : ""), alertBox(t("expired")),
        h("button", { type: "button", class: "vros-be-button", text: t("startOver"), onclick: () => { S.checkout = null; S.arrival = ""; S.departure = ""; S.quote = null; show("dates", true); loadCalendar(); } }));
    }

    function summary() {
      const c = S.checkout;
      const q = c.quote || {};
      const guests = [t("adultsN", { n: c.adults })];
      if (c.children) guests.push(t("childrenN", { n: c.children }));
      const row = (k, v, cls) => [h("dt", { text: k }), h("dd", { class: cls, text: v })];
      return h("dl", { class: "vros-be-summary" },
        row(t("property"), S.property ? S.property.name : `#${c.property_id}`),
        row(t("dates"), `${day(c.arrival)} – ${day(c.departure)} · ${t("nights", { n: q.nights || nightsBetween(c.arrival, c.departure) })}`),
        row(t("guests"), guests.join(", ")),
        row(t("total"), money(q.total, q.currency), "vros-be-summary-total"));
    }

    async function cancelCheckout() {
      if (S.busy) return;
      const c = S.checkout;
      S.busy = true;
      stopTimer();
      const r = await api("POST", `/checkouts/${encodeURIComponent(c.id)}/cancel`, {});
      S.busy = false;
      // A checkout already paid (Stripe confirmed it) is booked, not cancelled.
      if (r.error && r.error.code === "checkout_booked") { await showBooked(); return; }
      S.checkout = null;
      show("dates", true);
      loadCalendar();
      if (S.arrival && S.departure) requestQuote();
    }

    // -- forms: fields, their errors
    function field(name, label, input, opts) {
      const o = opts || {};
      const errId = id("err-" + name.replace(/\W/g, "-"));
      const helpId = o.help ? id("help-" + name.replace(/\W/g, "-")) : "";
      input.id = id("f-" + name.replace(/\W/g, "-"));
      input.name = name;
      input.classList.add("vros-be-input");
      if (o.required) { input.required = true; input.setAttribute("aria-required", "true"); }
      input.setAttribute("aria-describedby", [helpId, errId].filter(Boolean).join(" "));
      return h("div", { class: `vros-be-field vros-be-field-${name.replace(/\W/g, "-")}` },
        h("label", { for: input.id }, label, o.required ? null : h("span", { class: "vros-be-optional", text: ` (${t("optional")})` })),
        input,
        o.help ? h("p", { class: "vros-be-help", id: helpId, text: o.help }) : null,
        h("p", { class: "vros-be-error", id: errId }));
    }

    function clearErrors(form) {
      for (const e of form.querySelectorAll(".vros-be-error")) e.textContent = "";
      for (const i of form.querySelectorAll("[aria-invalid]")) i.removeAttribute("aria-invalid");
      const s = form.querySelector(".vros-be-form-error");
      if (s) s.replaceChildren();
    }

    // setError shows msg at the input named name (or, when no input has that name, at the
    // form); it answers the element to focus.
    function setError(form, name, msg) {
      let input = name ? form.querySelector(`[name="${CSS.escape(name)}"]`) : null;
      if (!input && name) input = form.querySelector(`[name="${CSS.escape(name.split(".").pop())}"]`);
      if (!input || input.type === "hidden") {
        const s = form.querySelector(".vros-be-form-error");
        s.replaceChildren(alertBox(msg));
        return s.firstChild;
      }
      input.setAttribute("aria-invalid", "true");
      const err = form.querySelector(`#${CSS.escape(input.id.replace(id("f-"), id("err-")))}`);
      if (err) err.textContent = msg;
      return input;
    }

    function showErrors(form, errs) {
      let first = null;
      for (const [name, msg] of errs) {
        const el = setError(form, name, msg);
        if (!first) first = el;
      }
      const named = errs.filter(([n]) => n && form.querySelector(`[name="${CSS.escape(n)}"], [name="${CSS.escape(n.split(".").pop())}"]`)).length;
      if (named) {
        const s = form.querySelector(".vros-be-form-error");
        if (!s.firstChild) s.append(alertBox(t("fixErrors", { n: named })));
      }
      if (first) {
        if (!first.matches("input, select, textarea")) first.setAttribute("tabindex", "-1");
        first.focus();
      }
    }

    // -- the guest
    function countryOptions(selected) {
      let names = null;
      try { names = new Intl.DisplayNames([cfg.locale], { type: "region" }); } catch (_) { names = null; }
      const list = COUNTRIES.map((c) => [c, names ? names.of(c) || c : c]).sort((a, b) => a[1].localeCompare(b[1], cfg.locale));
      return [h("option", { value: "", text: t("selectOne") }), ...list.map(([c, n]) => h("option", { value: c, selected: c === selected, text: n }))];
    }
    const guessCountry = () => {
      for (const l of [cfg.locale, ...(navigator.languages || [])]) {
        const m = /-([A-Za-z]{2})\b/.exec(l || "");
        if (m && COUNTRIES.includes(m[1].toUpperCase())) return m[1].toUpperCase();
      }
      return "";
    };

    function viewGuest() {
      const g = (S.checkout && S.checkout.guest) || S.guest || {};
      const form = h("form", { class: "vros-be-form", novalidate: true, onsubmit: submitGuest });
      form.append(h("div", { class: "vros-be-form-error" }),
        h("div", { class: "vros-be-row" },
          field("first_name", t("firstName"), h("input", { type: "text", autocomplete: "given-name", value: g.first_name || "" }), { required: true }),
          field("last_name", t("lastName"), h("input", { type: "text", autocomplete: "family-name", value: g.last_name || "" }), { required: true })),
        field("email", t("email"), h("input", { type: "email", autocomplete: "email", inputmode: "email", value: g.email || "" }), { required: true }),
        field("phone", t("phone"), h("input", { type: "tel", autocomplete: "tel", value: g.phone || "" })),
        field("country", t("country"), h("select", { autocomplete: "country" }, countryOptions(g.country || guessCountry())), { required: true }),
        field("notes", t("notes"), h("textarea", { rows: "3" }, g.notes || "")),
        h("div", { class: "vros-be-actions" },
          h("button", { type: "submit", class: "vros-be-button vros-be-continue", text: t("toPayment") }),
          h("button", { type: "button", class: "vros-be-link vros-be-cancel", text: t("cancel"), onclick: cancelCheckout })));
      main.append(heading(t("yourDetails")), summary(), h("p", { class: "vros-be-hold", role: "timer" }), form);
      tick();
    }

    const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

    async function submitGuest(ev) {
      ev.preventDefault();
      const form = ev.currentTarget;
      if (S.busy) return;
      clearErrors(form);
      const v = (n) => form.elements[n].value.trim();
      const body = { first_name: v("first_name"), last_name: v("last_name"), email: v("email"), country: v("country") };
      // The optional fields are sent only when given.
      if (v("phone")) body.phone = v("phone");
      if (v("notes")) body.notes = v("notes");
      const errs = [];
      for (const n of ["first_name", "last_name", "email", "country"]) if (!body[n]) errs.push([n, t("required")]);
      if (body.email && !EMAIL.test(body.email)) errs.push(["email", t("badEmail")]);
      if (errs.length) { showErrors(form, errs); return; }
      S.guest = body;
      const btn = form.querySelector(".vros-be-continue");
      S.busy = true;
      btn.disabled = true;
      const r = await api("POST", `/checkouts/${encodeURIComponent(S.checkout.id)}/guest`, body);
      S.busy = false;
      btn.disabled = false;
      if (r.error) { checkoutRefused(form, r.error); return; }
      S.checkout = r.data;
      show("pay", true);
    }

    // showBooked reads the checkout back: booked, it shows the booking (and redirects).
    async function showBooked() {
      const r = await api("GET", `/checkouts/${encodeURIComponent(S.checkout.id)}`);
      if (r.data && r.data.status === "booked") {
        stopTimer();
        S.checkout = r.data;
        show("done", true);
        redirect();
        return;
      }
      show("expired", true);
    }

    // checkoutRefused handles a refusal of a step of the checkout.
    function checkoutRefused(form, e) {
      if (e.code === "checkout_booked") { showBooked(); return; }
      if (e.code === "checkout_expired" || (e.code === "not_found" && !e.field)) { show("expired", true); return; }
      if (e.code === "dates_taken") { justTaken(true); return; }
      const msg = e.code === "payment_declined" ? `${t("declined")} ${stripField(e)}`.trim() : e.field ? stripField(e) : problem(e);
      showErrors(form, [[e.field || "", msg]]);
    }

    // -- payment
    function viewPay() {
      const c = S.checkout;
      const pay = c.payment || { gateway: "none" };
      const form = h("form", { class: "vros-be-form vros-be-pay", novalidate: true, onsubmit: submitPay });
      form.append(h("div", { class: "vros-be-form-error" }));
      const due = pay.gateway !== "none" && pay.amount ? money(pay.amount, pay.currency || (c.quote && c.quote.currency)) : "";
      if (pay.gateway === "test") {
        const year = new Date().getFullYear();
        const months = [h("option", { value: "", text: t("selectOne") })];
        for (let m = 1; m <= 12; m++) months.push(h("option", { value: String(m), text: pad(m) }));
        const years = [h("option", { value: "", text: t("selectOne") })];
        for (let y = year; y <= year + 15; y++) years.push(h("option", { value: String(y), text: String(y) }));
        form.append(
          h("p", { class: "vros-be-help vros-be-testmode", text: t("testMode") }),
          field("card.number", t("cardNumber"), h("input", { type: "text", inputmode: "numeric", autocomplete: "cc-number", spellcheck: "false" }), { required: true }),
          field("card.name", t("cardName"), h("input", { type: "text", autocomplete: "cc-name", value: S.guest ? `${S.guest.first_name} ${S.guest.last_name}` : "" }), { required: true }),
          h("div", { class: "vros-be-row" },
            field("card.exp_month", t("expMonth"), h("select", { autocomplete: "cc-exp-month" }, months), { required: true }),
            field("card.exp_year", t("expYear"), h("select", { autocomplete: "cc-exp-year" }, years), { required: true }),
            field("card.cvc", t("cvc"), h("input", { type: "text", inputmode: "numeric", autocomplete: "cc-csc", maxlength: "4" }), { required: true })));
      } else if (pay.gateway === "stripe") {
        form.append(h("div", { class: "vros-be-field vros-be-field-card" },
          h("span", { class: "vros-be-label", id: id("card-label"), text: t("card") }),
          h("div", { class: "vros-be-stripe", role: "group", "aria-labelledby": id("card-label"), "aria-describedby": id("err-card") }),
          h("p", { class: "vros-be-error", id: id("err-card"), role: "alert" })));
        mountStripe(form);
      } else {
        form.append(h("p", { class: "vros-be-help", text: t("nothingDue") }));
      }
      form.append(h("div", { class: "vros-be-actions" },
        h("button", { type: "submit", class: "vros-be-button vros-be-paybutton", text: due ? t("pay", { amount: due }) : t("confirmBooking") }),
        h("button", { type: "button", class: "vros-be-link vros-be-cancel", text: t("cancel"), onclick: cancelCheckout })));
      main.append(heading(t("payment")), summary(), h("p", { class: "vros-be-hold", role: "timer" }), form);
      tick();
    }

    async function mountStripe(form) {
      const pay = S.checkout.payment;
      const box = form.querySelector(".vros-be-stripe");
      const err = form.querySelector(`#${id("err-card")}`);
      try {
        const Stripe = await loadStripe();
        const stripe = Stripe(pay.publishable_key);
        const elements = stripe.elements({ locale: cfg.lang });
        const card = elements.create("card", { hidePostalCode: true });
        card.mount(box);
        card.on("change", (e) => { err.textContent = e.error ? e.error.message : ""; });
        S.stripe = { stripe, card };
      } catch (_) {
        err.textContent = t("cardFormFailed");
      }
    }

    async function submitPay(ev) {
      ev.preventDefault();
      const form = ev.currentTarget;
      // One payment in flight: a second press (a double click) does nothing; a retry after
      // an answer confirms the same checkout, which books once.
      if (S.busy) return;
      const btn = form.querySelector(".vros-be-paybutton");
      clearErrors(form);
      const pay = S.checkout.payment || { gateway: "none" };
      let body = {};
      if (pay.gateway === "test") {
        const v = (n) => form.elements[n].value.trim();
        const card = { number: v("card.number").replace(/[\s-]/g, ""), name: v("card.name"), exp_month: intIn(v("card.exp_month"), 1, 12, 0), exp_year: intIn(v("card.exp_year"), 2000, 9999, 0), cvc: v("card.cvc") };
        const errs = [];
        if (!card.number) errs.push(["card.number", t("required")]);
        if (!card.name) errs.push(["card.name", t("required")]);
        if (!card.exp_month) errs.push(["card.exp_month", t("required")]);
        if (!card.exp_year) errs.push(["card.exp_year", t("required")]);
        if (!card.cvc) errs.push(["card.cvc", t("required")]);
        if (errs.length) { showErrors(form, errs); return; }
        body = { card };
      }
      S.busy = true;
      btn.disabled = true;
      btn.setAttribute("aria-busy", "true");
      announce(t("paying"));
      try {
        if (pay.gateway === "stripe" && !S.stripePaid) {
          if (!S.stripe) { form.querySelector(`#${id("err-card")}`).textContent = t("cardFormFailed"); return; }
          const g = S.guest || {};
          const res = await S.stripe.stripe.confirmCardPayment(pay.client_secret, {
            payment_method: { card: S.stripe.card, billing_details: { name: `${g.first_name || ""} ${g.last_name || ""}`.trim(), email: g.email || undefined } },
          });
          const pi = res.paymentIntent || (res.error && res.error.payment_intent);
          if (pi && (pi.status === "succeeded" || pi.status === "requires_capture")) S.stripePaid = true;
          else {
            const e = form.querySelector(`#${id("err-card")}`);
            e.textContent = (res.error && res.error.message) || t("declined");
            return;
          }
        }
        const r = await api("POST", `/checkouts/${encodeURIComponent(S.checkout.id)}/confirm`, body);
        if (r.error) { checkoutRefused(form, r.error); return; }
        S.checkout = r.data;
        if (r.data.status !== "booked") { showErrors(form, [["", t("error")]]); return; }
        stopTimer();
        show("done", true);
        redirect();
      } finally {
        S.busy = false;
        if (S.step === "pay" && btn.isConnected) { btn.disabled = false; btn.removeAttribute("aria-busy"); }
      }
    }

    // -- the booking
    function viewDone() {
      const c = S.checkout;
      const bid = c.booking && c.booking.id;
      const [before, after] = String(T.reference).split("{id}");
      main.append(heading(t("confirmed")), h("p", { class: "vros-be-reference" }, before, h("strong", { class: "vros-be-booking-id", text: String(bid) }), after || ""), summary());
      if (redirectURL()) main.append(h("p", { class: "vros-be-help", text: t("redirecting") }));
    }

    function redirectURL() {
      if (!cfg.redirect || !S.checkout || !S.checkout.booking) return "";
      try {
        const u = new URL(cfg.redirect, location.href);
        if (u.protocol !== "http:" && u.protocol !== "https:") return "";
        u.searchParams.set("booking", String(S.checkout.booking.id));
        return u.href;
      } catch (_) {
        return "";
      }
    }
    function redirect() {
      const u = redirectURL();
      if (u) location.assign(u);
    }

    boot(false);
  }

  // ---------------------------------------------------------------- start

  const started = (window.__vrosBookingStarted = window.__vrosBookingStarted || new WeakSet());

  function stylesheet(base) {
    const href = `${base}/widget/engine.css`;
    if (document.querySelector(`link[data-vros-booking]`)) return;
    const l = document.createElement("link");
    l.rel = "stylesheet";
    l.href = href;
    l.setAttribute("data-vros-booking", "");
    // First in <head>: the site's own rules come later and win at equal specificity.
    const head = document.head || document.documentElement;
    head.insertBefore(l, head.firstChild);
  }

  function findScript() {
    for (const s of document.querySelectorAll("script[src]")) if (SCRIPT_NAMES.test(s.src) && !started.has(s)) return s;
    return null;
  }

  const me = document.currentScript && !started.has(document.currentScript) ? document.currentScript : findScript();
  if (!me) return;
  started.add(me);
  const run = () => {
    try {
      stylesheet(new URL(me.src, location.href).origin);
      start(me);
    } catch (e) {
      console.error("vros booking engine:", e);
    }
  };
  // Inside <head> the page has no place to render yet.
  if (!document.body && document.readyState === "loading") document.addEventListener("DOMContentLoaded", run, { once: true });
  else run();
})();
